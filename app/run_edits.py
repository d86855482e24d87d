"""Editing while a transcription runs: the table stays editable, and no undo step ever points at
a row that moved.

A run shows its chunks' lines as they arrive, outside the undo stack, while the user's edits go on
it as usual. Undo commands name rows by place, so a line arriving *before* an edited row would
make that command change the wrong line. `RunEdits` keeps the two apart:
- `begin(produced)` at the run's start marks the undo stack's index (`floor`: while the run goes
  on, Undo stops there — `may_undo`) and which lines of the table are the engine's as it gave
  them (lines of an earlier run left unchanged; every line when no run has produced any yet).
- `edited()`: the lines in the table that the user made — neither the engine's nor this run's.
- `add(rows, editing)` shows a chunk's lines. They are appended as they are when they fall after
  every row and the edits above the floor only name rows by place (`ChangeRows`, `ReplaceRows`):
  those stay exact, and stay undoable. Otherwise (and at the first chunk, which takes the place of
  the lines the run replaces) the edits are *folded* first: the table as it is now, less the lines
  the run replaces, becomes the document, and the stack goes back to the floor (each command
  undone on the rows it was made on) and loses its redo steps. Folded edits stay on screen but
  are no longer undone one by one. A chunk's line gives way, word by word, to a line of the user's
  it overlaps (`keep_edits.outside_words`; a line without word times stays whole). A fold resets
  the table, so it waits while a line is being edited: `add` returns False then, and the caller
  tries again later.
- `settle()` at the run's end (finished, failed or cancelled): the user's lines, with the stack
  back at the floor, for the caller's one command (the run's result, or the transcript given back).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QUndoCommand

from app.keep_edits import Spans, outside_words
from app.transcript_model import TranscriptModel
from app.undo_commands import Batch, ChangeRows, ReplaceRows
from engine.types import Utterance


def by_place(command: QUndoCommand) -> bool:
    """True when `command` names rows only by their place, unaffected by rows added after them."""
    if isinstance(command, Batch):
        return all(by_place(step) for step in command.steps)
    return isinstance(command, ChangeRows | ReplaceRows)


def drop_redo(model: TranscriptModel) -> None:
    """Forget the steps above the stack's index (Qt drops them when an obsolete command is pushed)."""
    stack = model.undo_stack
    if stack.index() < stack.count():
        marker = QUndoCommand()
        marker.setObsolete(True)
        stack.push(marker)


class RunEdits:
    def __init__(self, model: TranscriptModel) -> None:
        self.model = model
        self.floor: int | None = None  # the undo stack's index when the run began; None: no run
        self._replaced: set[Utterance] = set()  # lines of before the run that it replaces
        self._live: set[Utterance] = set()  # this run's lines, as shown
        self._first = True  # no chunk of this run shown yet

    @property
    def running(self) -> bool:
        return self.floor is not None

    def may_undo(self) -> bool:
        """Undo stays above the floor while the run goes on (below it lie the rows it replaced)."""
        return self.floor is None or self.model.undo_stack.index() > self.floor

    def begin(self, produced: set[Utterance]) -> None:
        self.floor = self.model.undo_stack.index()
        self._replaced = {u for u in self.model.utterances if not produced or u in produced}
        self._live, self._first = set(), True

    def edited(self) -> list[Utterance]:
        return [u for u in self.model.utterances if u not in self._replaced and u not in self._live]

    def add(self, rows: Sequence[Utterance], editing: bool) -> bool:
        """Show a chunk's lines; False (nothing done) when it needs a fold while a line is edited."""
        if self.floor is None or not rows:
            return True
        model = self.model
        appended = model.insertion_row(rows[0].start) == model.rowCount()
        if (self._first and self._replaced) or (self._dirty() and not (appended and self._by_place())):
            if editing:
                return False
            self._fold()
        self._first = False
        mine = Spans(self.edited())
        shown = [k for u in rows if (k := outside_words(u, mine) if u.words else u) is not None]
        self._live.update(shown)
        with model.batched():  # each where it belongs: after a fold, between the user's lines
            for u in shown:
                model.replace_rows(model.insertion_row(u.start), 0, [u])
        return True

    def settle(self) -> list[Utterance]:
        """The user's lines; the stack back at the floor without redo steps; the run forgotten."""
        if self.floor is None:
            return []
        edited = self.edited()
        with self.model.batched():  # the lanes and the counts told once, not at each step undone
            self.model.undo_stack.setIndex(self.floor)
            drop_redo(self.model)
        self.floor, self._replaced, self._live = None, set(), set()
        return edited

    def _dirty(self) -> bool:
        return self.floor is not None and self.model.undo_stack.count() > self.floor

    def _by_place(self) -> bool:
        stack, floor = self.model.undo_stack, self.floor or 0
        return all(by_place(stack.command(i)) for i in range(floor, stack.count()))

    def _fold(self) -> None:
        """The table without the lines the run replaces, and nothing above the floor to undo."""
        model, floor = self.model, self.floor or 0
        kept, book = [u for u in model.utterances if u not in self._replaced], model.book
        if model.undo_stack.count() > floor:
            model.undo_stack.setIndex(floor)
            drop_redo(model)
        model.set_document(kept, book, model.meta)
