"""Editing while a range is transcribed again: the table stays editable, and a line the user
changes in the range meanwhile is kept over the range's new lines.

A range job gives its lines all at once, when it ends, so nothing arrives under the user's edits
while it runs: they go on the undo stack as usual, and the range's result is one more step,
computed from the table as it is then (`commands.replace_range`). `begin()` marks the undo
stack's index — while the job runs, Undo stops there (`may_undo`): below it lies the transcript
the range was cut from — and the lines as they were. `edited(start, end)` gives the lines
starting in [start, end) that the user made since (changed, split, merged or inserted), which the
caller lays over the new lines with `keep_edits.overlaid`; `end()` forgets the job.
"""

from __future__ import annotations

from app import range_join
from app.transcript_model import TranscriptModel
from engine.types import Utterance


class RangeEdits:
    def __init__(self, model: TranscriptModel) -> None:
        self.model = model
        self.floor: int | None = None  # the undo stack's index when the job began; None: no job
        self._before: set[Utterance] = set()

    @property
    def running(self) -> bool:
        return self.floor is not None

    def may_undo(self) -> bool:
        return self.floor is None or self.model.undo_stack.index() > self.floor

    def begin(self) -> None:
        self.floor = self.model.undo_stack.index()
        self._before = set(self.model.utterances)

    def edited(self, start: float, end: float) -> list[Utterance]:
        lines = self.model.utterances
        rows = range_join.lines_in(lines, start, end)
        return [u for u in lines[rows.start : rows.stop] if u not in self._before]

    def end(self) -> None:
        self.floor, self._before = None, set()
