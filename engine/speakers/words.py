"""Word-level speaker assignment for backends that do not label speakers (whisper).

Contract of `assign_words(utterances, diarization, config)`:
- every word (an utterance without word times counts as one word spanning it) gets the speaker of
  the diarization turn it overlaps most; a word no turn covers gets the nearest turn;
- overlapping speech: a word inside the overlap of two turns goes to the turn it overlaps more;
  when both cover it equally (e.g. fully), it stays with the speaker of the word before it, since
  one transcript stream follows one voice; failing that, it goes to the turn that started last;
- diarization boundaries are imprecise, so each change of speaker is moved to the widest pause
  between words within `max_shift` seconds of it (a sentence end counts `sentence_bonus` seconds
  wider): turn boundaries fall between words and the first words of a turn do not stick to the
  previous speaker;
- utterances are re-formed: a new one starts at every change of speaker and after every sentence
  end (and where an input utterance ended); stitching later merges same-speaker neighbours;
- with an empty diarization every word goes to one speaker, "E0".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.speakers.diarization import Diarization
from engine.types import Utterance, Word

SENTENCE_END = (".", "?", "!")
FALLBACK_SPEAKER = "E0"
MIN_GAIN = 0.05  # a change of speaker moves only to a pause at least this much wider


@dataclass(frozen=True, slots=True)
class WordAssignConfig:
    max_shift: float = 0.6  # how far a change of speaker may move to reach a pause
    sentence_bonus: float = 0.15  # a sentence end counts as a pause this much wider
    tie: float = 0.02  # overlaps within this many seconds are equal

    def __post_init__(self) -> None:
        if self.max_shift < 0 or self.sentence_bonus < 0 or self.tie < 0:
            raise ValueError("word assignment durations must be non-negative")


@dataclass(frozen=True, slots=True)
class _Unit:
    word: Word
    breaks_after: bool  # an input utterance or a sentence ends here
    timed: bool = True  # False: a whole utterance standing in for its (unknown) words


def assign_words(
    utterances: Sequence[Utterance], diarization: Diarization, config: WordAssignConfig | None = None
) -> list[Utterance]:
    """Utterances re-formed by speaker, word by word (see the module contract)."""
    cfg = config or WordAssignConfig()
    units = _units(utterances)
    if not units:
        return []
    if not diarization.turns:
        labels = [FALLBACK_SPEAKER] * len(units)
    else:
        labels = _label_words([u.word for u in units], diarization, cfg)
        labels = _move_changes_to_pauses(units, labels, cfg)
    return _regroup(units, labels)


def _units(utterances: Sequence[Utterance]) -> list[_Unit]:
    units: list[_Unit] = []
    for u in sorted(utterances, key=lambda u: (u.start, u.end)):
        words = list(u.words) or [Word(u.start, u.end, u.text)]
        for i, w in enumerate(words):
            units.append(_Unit(w, i == len(words) - 1 or w.text.endswith(SENTENCE_END), bool(u.words)))
    return units


def _label_words(words: Sequence[Word], diarization: Diarization, cfg: WordAssignConfig) -> list[str]:
    turns = diarization.turns
    starts = np.array([t.start for t in turns])
    ends = np.array([t.end for t in turns])
    longest = float(np.max(ends - starts))
    labels: list[str] = []
    for w in words:
        hi = int(np.searchsorted(starts, w.end, side="right"))
        lo = int(np.searchsorted(starts, w.start - longest, side="left"))
        shared = np.minimum(ends[lo:hi], w.end) - np.maximum(starts[lo:hi], w.start)
        if hi > lo and shared.max() > 0:
            best = shared.max()
            tied = [lo + i for i in np.flatnonzero(shared >= best - cfg.tie)]
            previous = labels[-1] if labels else None
            same = [i for i in tied if turns[i].speaker == previous]
            labels.append(
                turns[same[0]].speaker if same else turns[max(tied, key=lambda i: starts[i])].speaker
            )
        else:
            gaps = np.maximum(starts - w.end, w.start - ends)
            labels.append(turns[int(np.argmin(gaps))].speaker)
    return labels


def _move_changes_to_pauses(units: Sequence[_Unit], labels: list[str], cfg: WordAssignConfig) -> list[str]:
    """Move every change of speaker to the widest nearby pause between words."""
    labels = list(labels)
    changes = [i for i in range(1, len(labels)) if labels[i] != labels[i - 1]]
    for n, c in enumerate(changes):
        left_limit = changes[n - 1] + 1 if n > 0 else 1  # never cross the previous change
        right_limit = changes[n + 1] - 1 if n + 1 < len(changes) else len(units) - 1
        at = (units[c - 1].word.end + units[c].word.start) / 2
        candidates = [  # pauses that reach within max_shift of the current change
            j for j in range(left_limit, right_limit + 1)
            if units[j].word.start >= at - cfg.max_shift and units[j - 1].word.end <= at + cfg.max_shift
        ]  # fmt: skip
        if not candidates:
            continue
        best = max(candidates, key=lambda j: (_pause(units, j, cfg), -abs(j - c)))
        if _pause(units, best, cfg) > _pause(units, c, cfg) + MIN_GAIN:
            before, after = labels[c - 1], labels[c]
            for j in range(min(best, c), max(best, c)):
                labels[j] = after if best < c else before
            changes[n] = best
    return labels


def _pause(units: Sequence[_Unit], j: int, cfg: WordAssignConfig) -> float:
    """Silence before unit j (plus the bonus when a sentence ends there)."""
    gap = units[j].word.start - units[j - 1].word.end
    return gap + (cfg.sentence_bonus if units[j - 1].breaks_after else 0.0)


def _regroup(units: Sequence[_Unit], labels: Sequence[str]) -> list[Utterance]:
    groups: list[list[int]] = [[0]]
    for i in range(1, len(units)):
        if labels[i] != labels[i - 1] or units[i - 1].breaks_after:
            groups.append([])
        groups[-1].append(i)
    out = []
    for group in groups:
        words = [units[i].word for i in group]
        out.append(Utterance(
            start=words[0].start, end=max(w.end for w in words), text=" ".join(w.text for w in words),
            speaker=labels[group[0]], words=tuple(units[i].word for i in group if units[i].timed),
        ))  # fmt: skip
    return out
