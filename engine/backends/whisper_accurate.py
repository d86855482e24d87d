"""How whisper decodes our chunks in the `accurate` quality: sequentially, conditioned on the text.

Contract (all times absolute seconds in, chunk-relative in the `ChunkResult`s out):
- `decode_accurate(model, recording, chunks, options)`: faster-whisper's sequential decoder over
  runs of chunks (less than 5 s apart) as clips: each 30 s window conditioned on the text before
  it, with temperature fallback when a window's text repeats itself or is improbable, and seeking
  to the last complete segment, so the decoder's windows, not our chunk edges, cut the speech and
  a window's tail is decoded again rather than dropped; each word goes to the chunk holding its
  middle. The sampling seed is fixed, so runs repeat. `decode_accurate_filled` (the accurate
  quality) then decodes any stretch of speech still without words as a clip of its own.
- it yields one `ChunkResult` per chunk, in chunk order, with sentence-split segments carrying
  word times; `cancel` is checked between segments.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from engine.backends.base import check_cancel
from engine.backends.whisper_checks import uncovered
from engine.backends.whisper_decode import DecodeOptions, fill_gaps, on_recording
from engine.backends.whisper_words import chunk_result, chunk_words, words_of
from engine.types import Chunk, ChunkResult, Recording, Word

JOIN_GAP = 5.0  # chunks closer than this are decoded as one clip
FALLBACK_SEED = 0  # temperature fallback samples; a fixed seed makes runs repeat


def decode_accurate(
    model: Any, recording: Recording, chunks: Sequence[Chunk], options: DecodeOptions,
    cancel: threading.Event | None = None,
) -> Iterator[ChunkResult]:  # fmt: skip
    """Sequential decoding of `chunks` (see the module contract): chunks less than `JOIN_GAP`
    apart form one clip, conditioned on the text before it, so the decoder's own windows (not our
    chunk edges) cut the speech, and each word goes to the chunk that holds its middle."""
    import ctranslate2

    if not chunks:
        return
    ctranslate2.set_random_seed(FALLBACK_SEED)
    segments, info = model.transcribe(
        recording.samples,
        language=options.language,
        beam_size=options.beam_size,
        word_timestamps=True,
        condition_on_previous_text=True,
        vad_filter=False,
        clip_timestamps=[t for span in _spans(chunks) for t in span],
        hotwords=options.hotwords,
        initial_prompt=options.initial_prompt,
        task=options.task,
        temperature=fallback(options.temperature),
    )
    current, found, words, started = 0, [], [], time.perf_counter()
    for seg in segments:
        check_cancel(cancel)
        for word in words_of(seg) or [Word(float(seg.start), float(seg.end), seg.text.strip())]:
            at = (word.start + word.end) / 2
            while current + 1 < len(chunks) and at >= chunks[current].end:
                seconds = time.perf_counter() - started
                yield chunk_result(chunks[current], found, words, seconds, info.language)
                current, found, words, started = current + 1, [], [], time.perf_counter()
            words.append(word)
        found.append(seg)
    for k in range(current, len(chunks)):
        here = k == current
        yield chunk_result(chunks[k], found if here else [], words if here else [], 0.0, info.language)


def fallback(first: float) -> tuple[float, ...]:
    """Whisper's temperature fallback from `first`: first, first + 0.2, … up to 1 (0: 0, 0.2, … 1)."""
    return tuple(round(first + 0.2 * k, 2) for k in range(6) if first + 0.2 * k <= 1.0 + 1e-9)


def _spans(chunks: Sequence[Chunk]) -> list[tuple[float, float]]:
    """Runs of chunks less than `JOIN_GAP` apart, as (start, end) clips."""
    spans = [(chunks[0].start, chunks[0].end)]
    for c in chunks[1:]:
        if c.start - spans[-1][1] < JOIN_GAP:
            spans[-1] = (spans[-1][0], c.end)
        else:
            spans.append((c.start, c.end))
    return spans


def decode_accurate_filled(
    model: Any, recording: Recording, chunks: Sequence[Chunk], options: DecodeOptions,
    cancel: threading.Event | None = None,
) -> Iterator[ChunkResult]:  # fmt: skip
    """`decode_accurate`, then speech the sequential decoder skipped (it can jump to a window's end
    after an early end of text) decoded as clips of its own, as the fast path does."""
    from faster_whisper import BatchedInferencePipeline

    batched = on_recording(BatchedInferencePipeline(model=model), recording)
    for result in decode_accurate(model, recording, chunks, options, cancel):
        if options.repair and uncovered(result.chunk, chunk_words(result), options.gap_seconds):
            check_cancel(cancel)
            result = fill_gaps(batched, [result], options)[0]
        yield result
