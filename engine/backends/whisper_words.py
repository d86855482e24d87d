"""faster-whisper's segments as our chunk results: words, sentences, chunk-relative times.

Contract:
- faster-whisper segments carry absolute times (seconds) and their window's start (`seek`, in
  10 ms frames).
- `words_of(segment)` / `all_words(segments)` are their words as `Word`s (empty ones left out,
  sorted by start); `chunk_result(chunk, segments, words, seconds)` is a chunk's `ChunkResult` with
  chunk-relative, sentence-split `Segment`s (`to_segments`), or untimed segments when no word has a
  time; `chunk_words(result)` reads the words back (chunk time).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from engine.types import Chunk, ChunkResult, FinishReason, GenerationStats, Segment, Word

SENTENCE_END = (".", "?", "!")
FRAMES_PER_SECOND = 100  # whisper's feature frame rate, the unit of a segment's `seek`


def chunk_words(result: ChunkResult) -> list[Word]:
    return [w for s in result.segments for w in s.words]


def absolute(words: Sequence[Word], offset: float) -> list[Word]:
    return [replace(w, start=w.start + offset, end=w.end + offset) for w in words]


def all_words(found: Sequence[Any]) -> list[Word]:
    return sorted((w for s in found for w in words_of(s)), key=lambda w: w.start)


def chunk_result(
    chunk: Chunk,
    found: Sequence[Any],
    words: Sequence[Word],
    seconds: float,
    language: str | None = None,
    rows: int = 0,
) -> ChunkResult:
    """A chunk's result from faster-whisper segments and their words (absolute times), decoded in
    `language` (faster-whisper's `info.language`) by a call of `rows` clips (0: not told)."""
    texts = [s.text for s in found if s.text.strip()]
    return ChunkResult(
        chunk=chunk,
        segments=tuple(to_segments(words, chunk)) if words else tuple(_untimed(found, chunk)),
        finish_reason=FinishReason.EOS,
        stats=GenerationStats(
            generated_tokens=sum(len(s.tokens) for s in found), decode_seconds=seconds, batch_rows=rows
        ),
        raw_text="".join(texts).strip(),
        language=language,
    )


def words_of(seg: Any) -> list[Word]:
    """A faster-whisper segment's words (absolute times), empty ones left out."""
    return [
        Word(start=float(w.start), end=float(w.end), text=w.word.strip(), probability=float(w.probability))
        for w in (seg.words or ())
        if w.word.strip()
    ]


def to_segments(words: Sequence[Word], chunk: Chunk) -> list[Segment]:
    """Absolute words as chunk-relative segments, split into sentences at final punctuation."""
    sentences: list[list[Word]] = [[]]
    for w in words:
        sentences[-1].append(Word(w.start - chunk.start, w.end - chunk.start, w.text, w.probability))
        if w.text.endswith(SENTENCE_END):
            sentences.append([])
    return [
        Segment(start=s[0].start, end=s[-1].end, text=" ".join(w.text for w in s), words=tuple(s))
        for s in sentences
        if s
    ]


def _untimed(found: Sequence[Any], chunk: Chunk) -> list[Segment]:
    return [
        Segment(start=float(s.start) - chunk.start, end=float(s.end) - chunk.start, text=s.text.strip())
        for s in found
        if s.text.strip()
    ]
