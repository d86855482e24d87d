"""Names the user gave speakers survive a new run of the whole recording.

A new run — the final run after recording, or the file transcribed again — diarizes afresh, so
its speakers are new ("Speaker 1", …) and, without this, every name typed before or during the run
would be lost. `named_book(transcript, before, book)` builds the new run's speaker book (colours kept
by id, as before) and gives each new speaker the name of the old one it took the place of:

- only names the user gave count: a name with no recogniser score that is not a default label
  ("Speaker N", or the bare id); a name the engine recognised from a known voice stays its own;
- old and new speakers are paired by shared talk time, on a 0.1 s grid, where both runs heard
  someone (a cancelled run's lines cover only part of the recording): a pair must share two
  thirds of each one's talk time there — so a person split in two, or two
  people merged, by the new run are not named after a guess (a wrong name is worse than none);
- the old lines are those before the run (`before`), their names as they are now (`book`: a
  rename during the run counts); a name the new book already has is not given twice.
Returns the book and the names carried, for the status bar.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from app import speakers as sp
from app.undo_commands import Document
from engine.types import Transcript, Utterance

GRID = 0.1  # seconds per cell of the talk-time grid
SHARE = 2 / 3  # of each one's talk time a pair must share
_DEFAULT = re.compile(r"Speaker \d+")


def named_book(
    transcript: Transcript, before: Document | None, book: sp.SpeakerBook
) -> tuple[sp.SpeakerBook, list[str]]:
    new_book = sp.book_from_transcript(transcript, {s.id: s.color for s in book})
    if before is None:
        return new_book, []
    names = {s.id: s.name for s in (*before.book, *book) if user_named(s)}
    pairs = paired(before.utterances, transcript.utterances)
    carried: list[str] = []
    taken = {s.name for s in new_book}
    out = []
    for s in new_book:
        name = names.get(pairs.get(s.id, ""), "")
        if name and s.score is None and name not in taken:
            s = sp.SpeakerInfo(s.id, name, s.color)
            taken.add(name)
            carried.append(name)
        out.append(s)
    return tuple(out), carried


def user_named(info: sp.SpeakerInfo) -> bool:
    return info.score is None and info.name != info.id and _DEFAULT.fullmatch(info.name) is None


def paired(old: Sequence[Utterance], new: Sequence[Utterance]) -> dict[str, str]:
    """New speaker id → the old speaker id it took the place of (enough shared time both ways)."""
    old_ids = sorted({u.speaker for u in old if u.speaker})
    new_ids = sorted({u.speaker for u in new if u.speaker})
    if not old_ids or not new_ids:
        return {}
    end = max(u.end for u in (*old, *new))
    a, b = _cells(old, old_ids, end), _cells(new, new_ids, end)
    both = (a >= 0) & (b >= 0)  # where both runs heard someone: a partial run covers only part
    shared = np.zeros((len(old_ids), len(new_ids)), np.int64)
    np.add.at(shared, (a[both], b[both]), 1)
    talk_old, talk_new = shared.sum(axis=1), shared.sum(axis=0)
    pairs = {}
    for j, new_id in enumerate(new_ids):
        i = int(np.argmax(shared[:, j]))  # over half of each one's time: each is the other's best
        if shared[i, j] > 0 and shared[i, j] >= SHARE * max(talk_old[i], talk_new[j]):
            pairs[new_id] = old_ids[i]
    return pairs


def _cells(lines: Sequence[Utterance], ids: list[str], end: float) -> np.ndarray:
    """Who speaks in each 0.1 s cell (index into `ids`; -1: nobody; the later line where two overlap)."""
    cells = np.full(int(end / GRID) + 1, -1, np.int64)
    index = {sid: i for i, sid in enumerate(ids)}
    for u in lines:
        if u.speaker:
            cells[int(u.start / GRID) : int(u.end / GRID)] = index[u.speaker]
    return cells
