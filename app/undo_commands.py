"""The undo commands that change the transcript model, each applied in O(rows it touches).

Commands see the model through the `TranscriptModel` Protocol (`app.transcript_model` implements
it and imports `app.commands`, which builds these; imports run one way). Shapes:
`ReplaceRows` (a run of rows becomes another, e.g. split 1→2, merge 2→1, a re-transcribed range;
optionally the speaker book changes too), `ChangeRows` (rows keep their places, e.g. Replace All;
optionally a new speaker book), `SetDocument` (everything, e.g. a finished transcription; the only
one that resets the model), `ShiftTimes` (every time moved: a vectorised shift, undone from the
rows' stored times, `TimeState`) and `Batch` (several as one step, inside `model.batched()`).
Each stores what it needs to make undo and redo exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtGui import QUndoCommand, QUndoStack

from app import speakers as sp
from app.row_store import TimeState
from engine.types import Transcript, Utterance


class TranscriptModel(Protocol):
    """What the commands change: the table model (`app.transcript_model`), which imports this
    module, never the reverse."""

    undo_stack: QUndoStack
    meta: Transcript

    @property
    def utterances(self) -> tuple[Utterance, ...]: ...
    @property
    def book(self) -> sp.SpeakerBook: ...
    def utterance(self, row: int) -> Utterance: ...
    def rowCount(self, parent: Any = None) -> int: ...
    def insertion_row(self, start: float) -> int: ...
    def replace_rows(self, first: int, count: int, new: Sequence[Utterance]) -> None: ...
    def change_rows(self, rows: Mapping[int, Utterance], book: sp.SpeakerBook | None = None) -> None: ...
    def set_document(self, rows: Sequence[Utterance], book: sp.SpeakerBook, meta: Transcript) -> None: ...
    def batched(self) -> AbstractContextManager[None]: ...
    def shift_times(self, seconds: float) -> None: ...
    def time_state(self) -> TimeState: ...
    def restore_times(self, state: TimeState) -> None: ...


@dataclass(frozen=True, slots=True)
class Document:
    utterances: tuple[Utterance, ...]
    book: sp.SpeakerBook
    meta: Transcript


class ReplaceRows(QUndoCommand):
    def __init__(self, model: TranscriptModel, first: int, old: Sequence[Utterance],
                 new: Sequence[Utterance], text: str,
                 books: tuple[sp.SpeakerBook, sp.SpeakerBook] | None = None) -> None:  # fmt: skip
        super().__init__(text)
        self.model, self.first, self.old, self.new = model, first, tuple(old), tuple(new)
        self.books = books

    def redo(self) -> None:
        if self.books:  # speakers first, so the new rows find theirs
            self.model.change_rows({}, self.books[1])
        self.model.replace_rows(self.first, len(self.old), self.new)

    def undo(self) -> None:
        self.model.replace_rows(self.first, len(self.new), self.old)
        if self.books:
            self.model.change_rows({}, self.books[0])


class ChangeRows(QUndoCommand):
    def __init__(self, model: TranscriptModel, old: Mapping[int, Utterance], new: Mapping[int, Utterance],
                 text: str, books: tuple[sp.SpeakerBook, sp.SpeakerBook] | None = None) -> None:  # fmt: skip
        super().__init__(text)
        self.model, self.old, self.new, self.books = model, dict(old), dict(new), books

    def redo(self) -> None:
        self.model.change_rows(self.new, self.books[1] if self.books else None)

    def undo(self) -> None:
        self.model.change_rows(self.old, self.books[0] if self.books else None)


class SetDocument(QUndoCommand):
    def __init__(self, model: TranscriptModel, old: Document, new: Document, text: str) -> None:
        super().__init__(text)
        self.model, self.old, self.new = model, old, new

    def redo(self) -> None:
        self.model.set_document(self.new.utterances, self.new.book, self.new.meta)

    def undo(self) -> None:
        self.model.set_document(self.old.utterances, self.old.book, self.old.meta)


class ShiftTimes(QUndoCommand):
    """Every time moved by `seconds`; undo and redo restore the rows' times as they were before
    and after (`TimeState`: references to the stored rows, no copies of lines or words)."""

    def __init__(self, model: TranscriptModel, seconds: float, text: str) -> None:
        super().__init__(text)
        self.model, self.seconds = model, seconds
        self.states: tuple[TimeState, TimeState] | None = None  # (before, after), from the first redo

    def redo(self) -> None:
        if self.states is None:
            before = self.model.time_state()
            self.model.shift_times(self.seconds)
            self.states = (before, self.model.time_state())
        else:
            self.model.restore_times(self.states[1])

    def undo(self) -> None:
        if self.states is not None:
            self.model.restore_times(self.states[0])


class Batch(QUndoCommand):
    """Several commands as one undo step, applied inside `model.batched()` both ways."""

    def __init__(self, model: TranscriptModel, steps: Sequence[QUndoCommand], text: str) -> None:
        super().__init__(text)
        self.model, self.steps = model, tuple(steps)

    def redo(self) -> None:
        with self.model.batched():
            for step in self.steps:
                step.redo()

    def undo(self) -> None:
        with self.model.batched():
            for step in reversed(self.steps):
                step.undo()
