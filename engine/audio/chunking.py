"""Greedy chunking of speech into windows of at most `max_seconds`, cut only in silence.

Contract of `plan_chunks`:
- every chunk lasts at most `max_seconds`; chunks are ordered and never overlap;
- every speech segment lies inside exactly one chunk, except a single speech run longer than
  `max_seconds`, which is first split at its quietest points into consecutive pieces, and,
  only when `pauses` are given (short pauses the VAD saw inside speech, for windows such as
  whisper's), a segment that does not fit in the chunk being filled, which is cut at the latest
  such pause that keeps the chunk within `FILL_SECONDS` (each side at least `MIN_PIECE` seconds);
- silence between chunks is skipped; a little of it (`pad_seconds`) is kept at each edge when
  there is room, so word onsets and tails are not clipped;
- times stay absolute seconds.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.types import Chunk, Recording, SpeechSegment

MIN_PIECE = 1.0  # seconds: the shortest piece a cut at a pause may leave on either side
FILL_SECONDS = 25.0  # a cut at a pause fills a chunk to at most this (whisper drops words in full windows)
QuietestPoint = Callable[[float, float], float]  # (from, to) seconds → the quietest time between them


@dataclass(frozen=True, slots=True)
class ChunkingConfig:
    max_seconds: float = 300.0
    pad_seconds: float = 0.2

    def __post_init__(self) -> None:
        if not 1.0 < self.max_seconds < math.inf:  # NaN fails here too
            raise ValueError(f"chunk size must be a finite number of seconds above 1, got {self.max_seconds}")
        if not 0 <= self.pad_seconds < self.max_seconds / 4:
            raise ValueError(f"chunk padding must be in [0, max/4), got {self.pad_seconds}")


def plan_chunks(
    speech: Sequence[SpeechSegment],
    config: ChunkingConfig,
    duration: float,
    quietest: QuietestPoint | None = None,
    pauses: Sequence[float] = (),
) -> list[Chunk]:
    """Merge speech segments greedily into chunks (see the module contract)."""
    room = config.max_seconds - 2 * config.pad_seconds  # speech allowed per chunk, pads included
    pieces = [p for seg in sorted(speech) for p in split_long_run(seg, room, quietest)]
    spans = _merge_greedy(pieces, room, sorted(pauses))
    return [
        Chunk(index=i, start=start, end=end, speech=tuple(segs))
        for i, (start, end, segs) in enumerate(_pad(spans, config.pad_seconds, duration))
    ]


def split_long_run(
    seg: SpeechSegment, max_seconds: float, quietest: QuietestPoint | None = None
) -> list[SpeechSegment]:
    """Split a speech run longer than `max_seconds` at its quietest points (evenly without audio)."""
    pieces: list[SpeechSegment] = []
    start = seg.start
    while seg.end - start > max_seconds:
        lo, hi = start + max_seconds / 2, start + max_seconds
        cut = quietest(lo, hi) if quietest is not None else start + max_seconds / 2
        cut = min(max(cut, lo), hi)
        pieces.append(SpeechSegment(start, cut))
        start = cut
    pieces.append(SpeechSegment(start, seg.end))
    return pieces


def _merge_greedy(
    pieces: Sequence[SpeechSegment], max_seconds: float, pauses: Sequence[float] = ()
) -> list[tuple[float, float, list[SpeechSegment]]]:
    spans: list[tuple[float, float, list[SpeechSegment]]] = []
    for piece in pieces:
        if spans and max(spans[-1][1], piece.end) - spans[-1][0] > max_seconds:
            cut = _fill_cut(piece, spans[-1][0] + min(max_seconds, FILL_SECONDS), pauses)
            if cut is not None:
                start, end, segs = spans[-1]
                spans[-1] = (start, cut, [*segs, SpeechSegment(piece.start, cut)])
                piece = SpeechSegment(cut, piece.end)
        if spans and max(spans[-1][1], piece.end) - spans[-1][0] <= max_seconds:
            start, end, segs = spans[-1]
            spans[-1] = (start, max(end, piece.end), [*segs, piece])
        else:
            spans.append((piece.start, piece.end, [piece]))
    return spans


def _fill_cut(piece: SpeechSegment, limit: float, pauses: Sequence[float]) -> float | None:
    """The latest pause inside `piece` at or before `limit` that leaves `MIN_PIECE` on each side."""
    hi = min(limit, piece.end - MIN_PIECE)
    i = bisect.bisect_right(pauses, hi) - 1
    return pauses[i] if i >= 0 and pauses[i] >= piece.start + MIN_PIECE else None


def _pad(
    spans: list[tuple[float, float, list[SpeechSegment]]], pad: float, duration: float
) -> list[tuple[float, float, list[SpeechSegment]]]:
    """Widen each span by up to `pad` into the silence around it, never into a neighbour."""
    padded = []
    for i, (start, end, segs) in enumerate(spans):
        prev_end = spans[i - 1][1] if i > 0 else 0.0
        next_start = spans[i + 1][0] if i + 1 < len(spans) else max(duration, end)
        new_start = max(start - pad, (prev_end + start) / 2 if i > 0 else 0.0)
        new_end = min(end + pad, (end + next_start) / 2 if i + 1 < len(spans) else next_start)
        padded.append((min(new_start, start), max(new_end, end), segs))
    return padded


def energy_quietest(recording: Recording, frame_seconds: float = 0.05) -> QuietestPoint:
    """A `QuietestPoint` over the recording: the centre of the lowest-energy frame in a range.

    Energy is smoothed over three frames so a single click does not count as silence.
    """
    hop = max(1, round(frame_seconds * recording.sample_rate))

    def quietest(lo: float, hi: float) -> float:
        a, b = recording.index(lo), recording.index(hi)
        n = (b - a) // hop
        if n < 1:
            return (lo + hi) / 2
        frames = recording.samples[a : a + n * hop].reshape(n, hop)  # (n, hop)
        energy = np.convolve(np.square(frames, dtype=np.float64).mean(axis=1), np.ones(3), "same")
        best = int(np.argmin(energy))
        return (a + best * hop + hop / 2) / recording.sample_rate

    return quietest
