"""How whisper decodes our chunks in the `fast` quality: batched, broken chunks repaired.

Contract (all times absolute seconds in, chunk-relative in the `ChunkResult`s out):
- `decode_fast(model, recording, chunks, options)`: faster-whisper's batched pipeline over the
  chunks (one 30 s window each, no conditioning, beam search), in full batches, or with
  `options.ramp` (someone watching) in batches that grow 1, 2, 4, … up to the batch size
  (`batch_plan`), so the first results come after one chunk. Batched whisper
  sometimes breaks a window: it loops on a phrase, stops early, or skips a stretch and stretches the
  words it kept over it. So each chunk is checked (`problems`: "loop", "gap", "sparse") and the
  broken ones of a batch are decoded again together, as one batch, in the other timestamp mode
  (with whisper's timestamp tokens when the first pass had none: it then ends a segment and starts
  the next instead of looping or skipping), from the encoder output their batch already computed
  (`_Encoder`); a repair is kept when it is better (no loop, more words), and speech still without
  words is decoded as clips of its own (`fill_gaps`). Only broken chunks cost a second decode,
  and it is batched, not one window after another. With `options.lanes` > 1 (a CPU model with
  that many replicas) the first passes of the next batches run ahead, side by side
  (`whisper_lanes.ahead`), while the caller's thread checks, repairs and yields each batch in
  chunk order; the results are the same as with one lane.
- it yields one `ChunkResult` per chunk, in chunk order, with sentence-split segments carrying
  word times; `cancel` is checked between batches and inside one (after its encoder, before its
  word alignment: `whisper_cancel`).

The `accurate` quality (sequential) is `whisper_accurate.decode_accurate_filled`; it borrows
`fill_gaps` for the speech its decoder skipped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from engine.backends.base import check_cancel
from engine.backends.whisper_cancel import Cancellable
from engine.backends.whisper_checks import (
    WORD_REACH,
    better,
    problems,
    speech_seconds,
    typical_rate,
    uncovered,
    word_rate,
)
from engine.backends.whisper_lanes import ahead
from engine.backends.whisper_words import (
    FRAMES_PER_SECOND,
    absolute,
    all_words,
    chunk_result,
    chunk_words,
    to_segments,
)
from engine.types import Chunk, ChunkResult, Recording

MAX_CLIP = 30.0 - 1e-3  # a clip's frames must fit whisper's window, whatever the rounding to samples
GAP_PAD = 0.3  # seconds of context kept around a stretch of speech decoded on its own


@dataclass(frozen=True, slots=True)
class DecodeOptions:
    language: str | None
    beam_size: int
    batch_size: int
    hotwords: str | None
    repair: bool = True  # fast: decode the broken chunks of a batch again, as one batch
    gap_seconds: float = 1.0  # fast: speech left without words this long makes a chunk broken
    timestamp_tokens: bool = False  # fast: let whisper write its timestamp tokens
    ramp: bool = False  # fast: batches grow 1, 2, 4, … so the first lines come after one chunk
    lanes: int = 1  # fast: batches decoded side by side (the model's CPU replicas; `whisper_lanes`)
    initial_prompt: str | None = None  # text before the first window: guides spelling and style
    temperature: float = 0.0  # accurate: the first sampling temperature of the fallback
    task: str = "transcribe"  # or "translate"


# a batched decode of (start, end) clips (absolute seconds): each clip's segments, and the language
Batched = Callable[[Sequence[tuple[float, float]], DecodeOptions], tuple[list[list[Any]], str | None]]
# a first-pass batch's results, and how to decode some of its chunks again (the repair's decode)
FirstPass = tuple[list[ChunkResult], Callable[[Sequence[ChunkResult]], Batched]]


def decode_fast(
    model: Any, recording: Recording, chunks: Sequence[Chunk], options: DecodeOptions,
    cancel: threading.Event | None = None,
) -> Iterator[ChunkResult]:  # fmt: skip
    from faster_whisper import BatchedInferencePipeline

    plain = BatchedInferencePipeline(model=Cancellable(model, cancel))  # for gap fills
    batches = [chunks[s.start : s.stop] for s in batch_plan(len(chunks), options.batch_size, options.ramp)]

    def first_pass(batch: Sequence[Chunk]) -> FirstPass:
        results, encoder = _first_pass(model, recording, batch, options, cancel)

        def repairer(broken: Sequence[ChunkResult]) -> Batched:
            reused = encoder.reusing([results.index(r) for r in broken])
            return on_recording(BatchedInferencePipeline(model=Cancellable(reused, cancel)), recording)

        return results, repairer

    passes = ahead(first_pass, batches, options.lanes)
    yield from checked(passes, on_recording(plain, recording), options, cancel)


def checked(
    passes: Iterable[FirstPass], plain: Batched, options: DecodeOptions, cancel: threading.Event | None
) -> Iterator[ChunkResult]:
    """Each first-pass batch, in chunk order, with its broken chunks decoded again (`_repaired`,
    through the batch's own repairer) and speech still without words decoded as clips (`fill_gaps`
    through `plain`). The decisions depend only on the batches' results, not on how they were decoded."""
    rates: list[float] = []  # words per second of speech of every chunk so far
    for results, repairer in passes:
        check_cancel(cancel)
        rates += [word_rate(r) for r in results if speech_seconds(r.chunk) > 0]
        typical = typical_rate(rates)
        broken = [r for r in results if options.repair and problems(r, options.gap_seconds, typical)]
        if broken:
            results = _repaired(repairer(broken), results, broken, options)
            results = fill_gaps(plain, results, options)
        yield from results


def on_recording(pipeline: Any, recording: Recording) -> Batched:
    """`_batched` through `pipeline` on `recording`, as a `Batched`."""
    return lambda clips, options: _batched(pipeline, recording, clips, options)


def _first_pass(
    model: Any, recording: Recording, batch: Sequence[Chunk], options: DecodeOptions,
    cancel: threading.Event | None,
) -> tuple[list[ChunkResult], _Encoder]:  # fmt: skip
    """One batch decoded as it is (in a lane of its own): its results, and its encoder, which
    keeps the batch's encoder output for the repairs."""
    from faster_whisper import BatchedInferencePipeline

    check_cancel(cancel)
    encoder = _Encoder(model)
    pipeline = BatchedInferencePipeline(model=Cancellable(encoder, cancel))  # cancel inside a batch too
    started = time.perf_counter()
    found, language = _batched(pipeline, recording, [(c.start, c.end) for c in batch], options)
    elapsed = (time.perf_counter() - started) / len(batch)
    results = [chunk_result(c, s, all_words(s), elapsed, language, rows=len(batch))
               for c, s in zip(batch, found, strict=True)]  # fmt: skip
    return results, encoder


def batch_plan(count: int, batch_size: int, ramp: bool = False) -> list[range]:
    """Which chunks each batch decodes: `batch_size` at a time, or with `ramp` 1, 2, 4, … up to
    `batch_size`, so the first lines (and the first chance to cancel) come after one chunk's
    decode, not a whole batch's — for someone watching (the app, a server's stream); without it
    fewer, fuller batches (a 15-chunk meeting: 8 + 7 instead of 1 + 2 + 4 + 8, 12 % less wall)."""
    plan, start, size = [], 0, 1 if ramp else batch_size
    while start < count:
        plan.append(range(start, min(start + size, count)))
        start, size = start + size, min(size * 2, batch_size)
    return plan


def _batched(
    pipeline: Any, recording: Recording, clips: Sequence[tuple[float, float]], options: DecodeOptions
) -> tuple[list[list[Any]], str | None]:
    """faster-whisper's batched decode of `clips`: the segments of each clip, in clip order, and
    the language it decoded in (the forced one, or the one it detected)."""
    bounded = [(a, min(b, a + MAX_CLIP)) for a, b in clips]
    return batched_clips(pipeline, recording.samples, bounded, options)


def batched_clips(
    pipeline: Any, samples: np.ndarray, clips: Sequence[tuple[float, float]], options: DecodeOptions
) -> tuple[list[list[Any]], str | None]:
    """`_batched` on clips already within whisper's window (faster-whisper cuts samples
    `int(t * 16000)`; its segments carry absolute times, `seek` their clip's start in frames)."""
    segments, info = pipeline.transcribe(
        samples,
        language=options.language,
        beam_size=options.beam_size,
        batch_size=len(clips),
        word_timestamps=True,
        vad_filter=False,
        clip_timestamps=[{"start": a, "end": b} for a, b in clips],
        hotwords=options.hotwords,
        without_timestamps=not options.timestamp_tokens,
        initial_prompt=options.initial_prompt,
        task=options.task,
    )
    found: list[list[Any]] = [[] for _ in clips]
    for seg in segments:
        owner = min(range(len(clips)), key=lambda k: abs(clips[k][0] - seg.seek / FRAMES_PER_SECOND))
        found[owner].append(seg)
    return found, info.language


def _repaired(
    batched: Batched, results: list[ChunkResult], broken: Sequence[ChunkResult], options: DecodeOptions
) -> list[ChunkResult]:
    """`results` with the `broken` ones decoded again, all in one batch, in the other timestamp mode;
    each repair kept where it is `better`."""
    other = replace(options, timestamp_tokens=not options.timestamp_tokens)
    started = time.perf_counter()
    found, language = batched([(r.chunk.start, r.chunk.end) for r in broken], other)
    elapsed = (time.perf_counter() - started) / len(broken)
    fixed = {r.chunk.index: chunk_result(r.chunk, s, all_words(s), elapsed, language)
             for r, s in zip(broken, found, strict=True)}  # fmt: skip
    return [better(r, fixed[r.chunk.index]) if r.chunk.index in fixed else r for r in results]


def on_cpu(model: Any) -> bool:
    """Whether faster-whisper's `model` runs on the CPU (its CTranslate2 model's device)."""
    return getattr(getattr(model, "model", None), "device", "cpu") == "cpu"


def replicas(model: Any) -> int:
    """How many calls faster-whisper's `model` runs side by side: its CPU replicas (1 on a GPU)."""
    return int(getattr(getattr(model, "model", None), "num_workers", 1)) if on_cpu(model) else 1


class _Encoder:
    """faster-whisper's model as its batched pipeline uses it, keeping the encoder's output of the
    last batch: `reusing(rows)` is the model once more, whose next encode returns those rows of it
    instead of encoding the same clips again (a quarter of a repair's cost on CPU). On a GPU, or
    with nothing kept, it encodes as usual."""

    def __init__(self, model: Any, rows: Sequence[int] | None = None, kept: Any = None) -> None:
        self._model, self._rows, self._kept = model, rows, kept
        self.last: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def encode(self, features: np.ndarray) -> Any:
        import ctranslate2

        if self._rows is not None and self._kept is not None and len(self._rows) == len(features):
            rows = np.asarray(self._kept)[list(self._rows)]
            self._kept = None  # once: any later call through this model is other audio
            return ctranslate2.StorageView.from_array(np.ascontiguousarray(rows))
        self.last = self._model.encode(features)
        return self.last

    def reusing(self, rows: Sequence[int]) -> _Encoder:
        keep = self.last is not None and on_cpu(self._model)
        return _Encoder(self._model, rows, self.last if keep else None)


def fill_gaps(batched: Batched, results: list[ChunkResult], options: DecodeOptions) -> list[ChunkResult]:
    """Decode each stretch of speech still without words as a clip of its own (one batch), and
    add the words found inside it to its chunk."""
    holes = [(k, r.chunk.start + a, r.chunk.start + b) for k, r in enumerate(results)
             for a, b in uncovered(r.chunk, chunk_words(r), options.gap_seconds)]  # fmt: skip
    if not holes:
        return results
    clips = [(max(results[k].chunk.start, a - GAP_PAD), min(results[k].chunk.end, b + GAP_PAD))
             for k, a, b in holes]  # fmt: skip
    found, _language = batched(clips, options)
    out = list(results)
    for (k, a, b), segs in zip(holes, found, strict=True):
        extra = [w for w in all_words(segs) if w.end > a - WORD_REACH and w.start < b + WORD_REACH]
        if extra:
            r = out[k]
            words = sorted([*absolute(chunk_words(r), r.chunk.start), *extra], key=lambda w: w.start)
            text = f"{r.raw_text} {' '.join(w.text for w in extra)}"
            out[k] = replace(r, segments=tuple(to_segments(words, r.chunk)), raw_text=text)
    return out
