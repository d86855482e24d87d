"""Stitching: chunk results (chunk-relative, chunk-local) → utterances (absolute, global speakers).

This is the one place where times become absolute. Contract of `stitch`:
- a segment's times are shifted by its chunk's start and clamped into the chunk;
- inverted or degenerate times are repaired (from the segment's words when it has them, else from
  the next segment's start or a speaking-rate estimate) — or, with `inversions="drop"` (the paper's
  filtering), segments whose times the model wrote inverted are dropped; segments with no text are
  dropped;
- chunk-local speakers are mapped to global ids through `speaker_map` (missing → None);
- text repeated across a chunk boundary is said once: a segment (of at least `dedup_min_words`
  words) starting within `dedup_seconds` of its chunk's start whose words already occur in a
  segment ending within `dedup_seconds` of the previous chunk's end is dropped; one that merely
  starts with that segment's last words (at least `dedup_min_words`) loses them. Only *adjacent*
  chunks are compared (the silence between them at most `adjacent_gap` seconds), and only
  segments whose times overlap once widened by `dedup_seconds`: the same sentence said again
  minutes later is never removed. `removals` counts what this and the other steps removed;
- an optional `relabel` step (word-level speaker assignment) may re-split and relabel utterances;
- neighbours of the same (known) speaker closer than `merge_gap` seconds are merged;
- speaker ids are renamed "S1", "S2"… in order of first appearance (`renumber_speakers`);
- the output is sorted by start time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from engine.types import Chunk, ChunkResult, Removed, Segment, Utterance, Word

INVERSIONS = ("repair", "drop")
SECONDS_PER_WORD = 0.35  # a typical speaking rate, used only to repair a missing end time

SpeakerMap = Mapping[tuple[int, int], str]  # (chunk index, local speaker) → global speaker id
Relabel = Callable[[Sequence[Utterance]], list[Utterance]]  # ordered utterances in, relabelled out


@dataclass(frozen=True, slots=True)
class StitchConfig:
    merge_gap: float = 1.5
    max_merged_seconds: float = 120.0  # never merge into an utterance longer than this
    dedup_seconds: float = 3.0  # how near a chunk boundary repeated text is looked for
    dedup_min_words: int = 3  # shortest repeat (whole or partial) that is removed
    adjacent_gap: float = 0.5  # chunks further apart than this (seconds) are never de-duplicated
    inversions: str = "repair"  # "repair" inverted times, or "drop" those segments (the paper)

    def __post_init__(self) -> None:
        if self.inversions not in INVERSIONS:
            raise ValueError(f"inversions must be one of {', '.join(INVERSIONS)}, got {self.inversions!r}")
        if self.merge_gap < 0:
            raise ValueError(f"merge gap must be non-negative, got {self.merge_gap}")
        if self.max_merged_seconds <= 0:
            raise ValueError("max merged utterance length must be positive")
        if self.dedup_seconds < 0 or self.dedup_min_words < 1 or not self.adjacent_gap >= 0:
            raise ValueError("duplicate removal needs non-negative windows and at least one word")


def stitch(
    results: Iterable[ChunkResult],
    speaker_map: SpeakerMap | None = None,
    config: StitchConfig | None = None,
    relabel: Relabel | None = None,
) -> tuple[Utterance, ...]:
    """Turn chunk results into ordered, merged utterances (see the module contract)."""
    config = config or StitchConfig()
    ordered = sorted(results, key=lambda r: r.chunk.index)
    drop = config.inversions == "drop"
    per_chunk = [absolute_utterances(r, speaker_map or {}, drop) for r in ordered]
    chunks = [r.chunk for r in ordered]
    utterances = [u for chunk in drop_edge_duplicates(chunks, per_chunk, config) for u in chunk]
    utterances.sort(key=lambda u: (u.start, u.end))
    if relabel is not None:
        utterances = sorted(relabel(utterances), key=lambda u: (u.start, u.end))
    return tuple(renumber_speakers(merge_same_speaker(utterances, config)))


def segment_times(result: ChunkResult, drop_inverted: bool = False) -> list[tuple[Segment, float, float]]:
    """Each non-empty segment of a chunk with its repaired absolute (start, end)."""
    chunk = result.chunk
    segments = [s for s in result.segments if s.text.strip() and not (drop_inverted and _inverted(s))]
    out = []
    for i, seg in enumerate(segments):
        next_start = segments[i + 1].start if i + 1 < len(segments) else None
        out.append((seg, *_repair_times(seg, chunk, next_start)))
    return out


def absolute_utterances(
    result: ChunkResult, speaker_map: SpeakerMap, drop_inverted: bool = False
) -> list[Utterance]:
    """The chunk's segments as absolute, repaired utterances (empty texts dropped)."""
    chunk = result.chunk
    out = []
    for seg, start, end in segment_times(result, drop_inverted):
        speaker = None if seg.speaker is None else speaker_map.get((chunk.index, seg.speaker))
        words = tuple(_absolute_word(w, chunk) for w in seg.words)
        out.append(Utterance(start=start, end=end, text=seg.text.strip(), speaker=speaker, words=words))
    return out


def drop_edge_duplicates(
    chunks: Sequence[Chunk], per_chunk: Sequence[list[Utterance]], config: StitchConfig
) -> list[list[Utterance]]:
    """Remove text a chunk's head repeats from the previous chunk's tail (see the module contract)."""
    out = [list(per_chunk[0])] if per_chunk else []
    for i in range(1, len(per_chunk)):
        if chunks[i].start - chunks[i - 1].end > config.adjacent_gap:  # not touching: nothing repeats
            out.append(list(per_chunk[i]))
            continue
        tail = [u for u in out[-1] if u.end >= chunks[i - 1].end - config.dedup_seconds]
        head_until = chunks[i].start + config.dedup_seconds
        kept = [_without_repeat(u, tail, config) if u.start <= head_until else u for u in per_chunk[i]]
        out.append([u for u in kept if u is not None])
    return out


def _without_repeat(u: Utterance, tail: Sequence[Utterance], config: StitchConfig) -> Utterance | None:
    head = _norm_words(u.text)
    if len(head) < config.dedup_min_words:  # "Yes." twice is usually said twice
        return u
    for t in tail:
        if not _near(t, u, config.dedup_seconds):
            continue
        before = _norm_words(t.text)
        if _contains(before, head):
            return None
        k = _overlap(before, head, config.dedup_min_words)
        if k:
            return _drop_first_words(u, k)
    return u


def _near(before: Utterance, after: Utterance, slack: float) -> bool:
    """Whether the two utterances' times overlap once widened by `slack` seconds."""
    return after.start <= before.end + slack and before.start <= after.end + slack


def removals(
    results: Sequence[ChunkResult], utterances: Sequence[Utterance], config: StitchConfig | None = None
) -> Removed:
    """What the clean-up steps removed on the way from `results` to the stitched `utterances`:
    words at chunk boundaries, words lost after that (speaker assignment, same-speaker merge;
    0 when they work as they should), and the model tokens loop recovery rolled back or cut."""
    config = config or StitchConfig()
    ordered = sorted(results, key=lambda r: r.chunk.index)
    per_chunk = [absolute_utterances(r, {}, config.inversions == "drop") for r in ordered]
    kept = word_count(drop_edge_duplicates([r.chunk for r in ordered], per_chunk, config))
    return Removed(
        boundary_words=word_count(per_chunk) - kept,
        merge_words=max(0, kept - word_count([utterances])),
        rollback_tokens=sum(r.stats.rolled_back_tokens for r in results),
        salvage_tokens=sum(r.stats.salvage_dropped_tokens for r in results),
    )


def word_count(groups: Iterable[Iterable[Utterance]]) -> int:
    """Words (as the de-duplication counts them) in groups of utterances."""
    return sum(len(_norm_words(u.text)) for group in groups for u in group)


def _norm_words(text: str) -> list[str]:
    return [w for w in (re.sub(r"[^\w']", "", t.lower()) for t in text.split()) if w]


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def _overlap(before: list[str], after: list[str], least: int) -> int:
    """Largest k ≥ `least` with before[-k:] == after[:k] (0 when none)."""
    for k in range(min(len(before), len(after) - 1), least - 1, -1):
        if before[-k:] == after[:k]:
            return k
    return 0


def _drop_first_words(u: Utterance, k: int) -> Utterance:
    tokens = u.text.split()
    # count only tokens that carry a word, like _norm_words does
    seen, cut = 0, 0
    while cut < len(tokens) and seen < k:
        seen += bool(re.sub(r"[^\w']", "", tokens[cut]))
        cut += 1
    if len(u.words) != len(tokens):  # words do not line up with the text: keep them and the start
        return replace(u, text=" ".join(tokens[cut:]))
    words = u.words[cut:]
    start = words[0].start if words else u.start
    return replace(u, text=" ".join(tokens[cut:]), words=words, start=max(u.start, start))


def renumber_speakers(utterances: Sequence[Utterance]) -> list[Utterance]:
    """Speaker ids renamed "S1", "S2"… in order of first appearance (None stays None)."""
    names: dict[str, str] = {}
    for u in utterances:
        if u.speaker is not None and u.speaker not in names:
            names[u.speaker] = f"S{len(names) + 1}"
    return [u if u.speaker is None else replace(u, speaker=names[u.speaker]) for u in utterances]


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


def _inverted(seg: Segment) -> bool:
    """Whether the model wrote this segment's end before its start (before any repair)."""
    return "inverted" in seg.flags or seg.end < seg.start


def _absolute_word(word: Word, chunk: Chunk) -> Word:
    start = chunk.start + _clamp(word.start, 0.0, chunk.duration)
    end = chunk.start + _clamp(word.end, word.start if word.start > 0 else 0.0, chunk.duration)
    return replace(word, start=start, end=max(start, end))


def _clamp(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)
