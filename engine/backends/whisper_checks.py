"""Whether a chunk whisper decoded looks broken, and which of two decodes of it is better.

- `problems(result, gap_seconds, typical)`: "loop" (the text repeats itself: whisper's
  compression-ratio test), "gap" (a stretch of speech with no word), "sparse" (under half the
  recording's typical words per second of speech); empty when the chunk looks whole.
- `better(first, second)`: the repaired decode unless it is no better (loops too, or finds fewer
  words); its stats add up both decodes.
- `typical_rate(rates)`: the recording's typical words per second once enough chunks are known.
All times are chunk-relative here, as in a `ChunkResult`.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import replace

from engine.backends.whisper_words import chunk_words
from engine.types import Chunk, ChunkResult, Word

WORD_REACH = 0.25  # a decoded word covers this much speech beyond its own times
LOOP_RATIO = 2.4  # whisper's compression-ratio threshold for repetitive text
MIN_SPARSE_SPEECH = 8.0  # seconds of speech a chunk needs before its word rate is judged
MIN_RATES = 3  # chunks needed before a recording's typical word rate is known


def problems(result: ChunkResult, gap_seconds: float, typical: float | None) -> tuple[str, ...]:
    """Why a chunk's text looks broken: "loop" (it repeats itself: whisper's compression-ratio
    test), "gap" (a stretch of speech of at least `gap_seconds` has no word), "sparse" (under
    half the recording's typical words per second of speech)."""
    found = []
    if compression_ratio(result.raw_text) > LOOP_RATIO:
        found.append("loop")
    if uncovered(result.chunk, chunk_words(result), gap_seconds):
        found.append("gap")
    if typical and speech_seconds(result.chunk) >= MIN_SPARSE_SPEECH and word_rate(result) < typical / 2:
        found.append("sparse")
    return tuple(found)


def compression_ratio(text: str) -> float:
    """Bytes over zlib-compressed bytes: above 2.4 whisper calls a text repetitive."""
    raw = text.encode("utf-8")
    return len(raw) / len(zlib.compress(raw)) if raw else 0.0


def uncovered(chunk: Chunk, words: Sequence[Word], least: float) -> list[tuple[float, float]]:
    """Stretches of the chunk's VAD speech (chunk time) at least `least` long that no word
    (chunk time, widened by `WORD_REACH`) covers."""
    reach = sorted((w.start - WORD_REACH, w.end + WORD_REACH) for w in words)
    out = []
    for seg in chunk.speech:
        start, end = seg.start - chunk.start, seg.end - chunk.start
        for a, b in reach:
            if b <= start or a >= end:
                continue
            if a - start >= least:
                out.append((start, a))
            start = max(start, b)
        if end - start >= least:
            out.append((start, end))
    return out


def better(first: ChunkResult, second: ChunkResult) -> ChunkResult:
    """The repaired result unless it is no better (loops too, or finds fewer words)."""

    def score(r: ChunkResult) -> tuple[bool, int]:
        return compression_ratio(r.raw_text) <= LOOP_RATIO, len(chunk_words(r))

    if score(second) <= score(first):
        return first
    stats = replace(second.stats, retries=first.stats.retries + 1,
                    decode_seconds=first.stats.decode_seconds + second.stats.decode_seconds)  # fmt: skip
    return replace(second, stats=stats)


def speech_seconds(chunk: Chunk) -> float:
    return sum(s.duration for s in chunk.speech)


def word_rate(result: ChunkResult) -> float:
    return sum(len(s.words) for s in result.segments) / max(speech_seconds(result.chunk), 1e-9)


def typical_rate(values: Sequence[float]) -> float | None:
    return float(sorted(values)[len(values) // 2]) if len(values) >= MIN_RATES else None
