"""How a re-transcribed time range joins the transcript around it (pure functions, no Qt).

- `widen(utterances, start, end)` grows [start, end] until no line crosses its edges: a line
  that starts before the range but ends inside it (meetings overlap) is transcribed again whole,
  so its words are never kept twice (once in the old line, once in the new one) nor lost.
- `lines_in(utterances, start, end)` the indices of the lines a widened range replaces.
- `attribute(new, old)` the new lines with the speakers of the lines they replace: each new word
  takes the speaker of the old line it falls in (or, in a pause, the one within `NEAR`), and new lines are cut
  where that speaker (or the old line) changes. The user's speakers, edited or not, keep their
  global identities, and a short range's weaker diarization cannot merge two people's lines.
  Words no old line covers keep the speaker the range's own diarization matched (see
  `engine.retranscribe`); a line without word timings is attributed as a whole, by its middle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engine.types import Utterance, Word

EPS = 1e-6
NEAR = 1.0  # seconds: a word in a pause this close to an old line belongs to that line


def widen(utterances: Sequence[Utterance], start: float, end: float) -> tuple[float, float]:
    """[start, end] grown to the whole lines that overlap it (repeated while lines chain on)."""
    while True:
        inside = [u for u in utterances if u.end > start + EPS and u.start < end - EPS]
        lo = min([start, *(u.start for u in inside)])
        hi = max([end, *(u.end for u in inside)])
        if (lo, hi) == (start, end):
            return start, end
        start, end = lo, hi


def lines_in(utterances: Sequence[Utterance], start: float, end: float) -> range:
    """Indices (a run, the lines being sorted by start) of the lines starting in [start, end)."""
    rows = [i for i, u in enumerate(utterances) if start - EPS <= u.start < end - EPS]
    if rows:
        return range(rows[0], rows[-1] + 1)
    at = next((i for i, u in enumerate(utterances) if u.start >= start), len(utterances))
    return range(at, at)


def _owner(t: float, old: Sequence[Utterance]) -> int | None:
    """Index of the old line containing time `t` (the latest-starting one where lines overlap),
    else of the nearest one within `NEAR` seconds, else None."""
    best, distance = None, NEAR
    for i, u in enumerate(old):
        d = max(u.start - t, t - u.end, 0.0)
        if d < distance or (d == 0.0 and distance == 0.0):
            best, distance = i, d
    return best


def _group(words: Sequence[Word], keys: Sequence[object]) -> list[tuple[Word, ...]]:
    groups: list[list[Word]] = []
    for i, w in enumerate(words):
        if groups and keys[i] == keys[i - 1]:
            groups[-1].append(w)
        else:
            groups.append([w])
    return [tuple(g) for g in groups]


def _text(words: Sequence[Word]) -> str:
    text = " ".join(w.text.strip() for w in words if w.text.strip())
    return text[:1].upper() + text[1:]


def attribute(new: Sequence[Utterance], old: Sequence[Utterance]) -> tuple[Utterance, ...]:
    """The lines of `new` with the speakers of the `old` lines they fall in (see the contract)."""
    out: list[Utterance] = []
    for j, u in enumerate(new):
        if not u.words:
            owner = _owner((u.start + u.end) / 2, old)
            speaker = old[owner].speaker if owner is not None and old[owner].speaker else u.speaker
            out.append(replace(u, speaker=speaker))
            continue
        owners = [_owner((w.start + w.end) / 2, old) for w in u.words]
        keys = [("old", o) if o is not None and old[o].speaker else ("new", j) for o in owners]
        groups = _group(u.words, keys)
        if len(groups) == 1:  # one speaker: the line and its text stay as recognised
            key = keys[0]
            out.append(replace(u, speaker=old[key[1]].speaker if key[0] == "old" else u.speaker))  # type: ignore[index]
            continue
        at = 0
        for g in groups:
            key = keys[at]
            at += len(g)
            speaker = old[key[1]].speaker if key[0] == "old" else u.speaker  # type: ignore[index]
            start = u.start if g[0] is u.words[0] else g[0].start
            end = u.end if g[-1] is u.words[-1] else g[-1].end
            out.append(Utterance(start, max(end, start), _text(g), speaker, g))
    return tuple(sorted(out, key=lambda x: x.start))
