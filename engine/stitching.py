"""Stitching: chunk results (chunk-relative, chunk-local) → utterances (absolute, global speakers).

This is the one place where times become absolute. Contract of `stitch`:
- a segment's times are shifted by its chunk's start and clamped into the chunk;
- inverted or degenerate times are repaired (from the segment's words when it has them, else from
  the next segment's start or a speaking-rate estimate); segments with no text are dropped;
- chunk-local speakers are mapped to global ids through `speaker_map` (missing → None);
- neighbours of the same (known) speaker closer than `merge_gap` seconds are merged;
- the output is sorted by start time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from engine.types import Chunk, ChunkResult, Segment, Utterance, Word

SECONDS_PER_WORD = 0.35  # a typical speaking rate, used only to repair a missing end time

SpeakerMap = Mapping[tuple[int, int], str]  # (chunk index, local speaker) → global speaker id


@dataclass(frozen=True, slots=True)
class StitchConfig:
    merge_gap: float = 1.5
    max_merged_seconds: float = 120.0  # never merge into an utterance longer than this

    def __post_init__(self) -> None:
        if self.merge_gap < 0:
            raise ValueError(f"merge gap must be non-negative, got {self.merge_gap}")
        if self.max_merged_seconds <= 0:
            raise ValueError("max merged utterance length must be positive")


def stitch(
    results: Iterable[ChunkResult],
    speaker_map: SpeakerMap | None = None,
    config: StitchConfig | None = None,
) -> tuple[Utterance, ...]:
    """Turn chunk results into ordered, merged utterances (see the module contract)."""
    config = config or StitchConfig()
    utterances: list[Utterance] = []
    for result in sorted(results, key=lambda r: r.chunk.index):
        utterances.extend(absolute_utterances(result, speaker_map or {}))
    utterances.sort(key=lambda u: (u.start, u.end))
    return tuple(merge_same_speaker(utterances, config))


def absolute_utterances(result: ChunkResult, speaker_map: SpeakerMap) -> list[Utterance]:
    """The chunk's segments as absolute, repaired utterances (empty texts dropped)."""
    chunk = result.chunk
    segments = [s for s in result.segments if s.text.strip()]
    out = []
    for i, seg in enumerate(segments):
        next_start = segments[i + 1].start if i + 1 < len(segments) else None
        start, end = _repair_times(seg, chunk, next_start)
        speaker = None if seg.speaker is None else speaker_map.get((chunk.index, seg.speaker))
        words = tuple(_absolute_word(w, chunk) for w in seg.words)
        out.append(Utterance(start=start, end=end, text=seg.text.strip(), speaker=speaker, words=words))
    return out


def merge_same_speaker(utterances: Sequence[Utterance], config: StitchConfig) -> list[Utterance]:
    """Merge consecutive utterances of the same known speaker separated by at most `merge_gap`."""
    merged: list[Utterance] = []
    for u in utterances:
        prev = merged[-1] if merged else None
        if (
            prev is not None
            and u.speaker is not None
            and u.speaker == prev.speaker
            and u.start - prev.end <= config.merge_gap
            and max(u.end, prev.end) - prev.start <= config.max_merged_seconds
        ):
            merged[-1] = replace(
                prev,
                end=max(prev.end, u.end),
                text=f"{prev.text} {u.text}",
                words=prev.words + u.words,
            )
        else:
            merged.append(u)
    return merged


def _repair_times(seg: Segment, chunk: Chunk, next_start: float | None) -> tuple[float, float]:
    """Absolute (start, end) inside the chunk; inverted or empty spans rebuilt from evidence."""
    start, end = seg.start, seg.end
    if seg.words and (end <= start or start < 0 or end > chunk.duration):
        start, end = min(w.start for w in seg.words), max(w.end for w in seg.words)
    start = _clamp(start, 0.0, chunk.duration)
    if end <= start:  # inverted or missing: next segment's start, else a speaking-rate estimate
        estimate = start + SECONDS_PER_WORD * max(1, len(seg.text.split()))
        end = next_start if next_start is not None and next_start > start else estimate
    end = _clamp(end, start, chunk.duration)
    return chunk.start + start, chunk.start + end


def _absolute_word(word: Word, chunk: Chunk) -> Word:
    start = chunk.start + _clamp(word.start, 0.0, chunk.duration)
    end = chunk.start + _clamp(word.end, word.start if word.start > 0 else 0.0, chunk.duration)
    return replace(word, start=start, end=max(start, end))


def _clamp(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)
