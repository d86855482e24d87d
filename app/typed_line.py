"""The line being typed when a run's result takes the table's place: kept, then opened again.

A finished run (or a range transcribed again, or a run cancelled or failed) replaces the table's
rows, which closes any open editor. `close_typed(editor, model)` first writes the text being typed
into its line (it becomes one of the user's lines, kept over the run's by `app.keep_edits`) and
returns where it was (`TypedLine`: the line as kept, and the caret); `reopen_typed` opens the editor
again on that line once the swap is done, caret where it was, so the keys typed next
still go into the line instead of to the table's shortcuts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from app.transcript_model import TranscriptModel


class LineEditor(Protocol):
    """The table's view, as far as a run needs it."""

    def is_editing(self) -> bool: ...
    def edit_cursor(self) -> tuple[int, int] | None: ...
    def commit_open_editor(self) -> None: ...
    def reopen_editor(self, row: int, caret: int) -> None: ...


@dataclass(frozen=True)
class TypedLine:
    start: float  # the line as it was kept: its times and text, which the swap leaves as they are
    end: float
    text: str
    caret: int  # the character position of the caret in its text


def close_typed(editor: LineEditor | None, model: TranscriptModel) -> TypedLine | None:
    """Write the text being typed (if any) into its line and close the editor; where it was."""
    if editor is None or (at := editor.edit_cursor()) is None:
        return None
    editor.commit_open_editor()
    line = model.utterance(at[0])
    return TypedLine(line.start, line.end, line.text, at[1])


def row_of(model: TranscriptModel, typed: TypedLine) -> int | None:
    """The row holding the typed line (lines may start together: the one with its end and text);
    else the line playing at its start, or the nearest one."""
    row = model.insertion_row(typed.start) - 1  # the last row starting at or before it
    while row >= 0 and (line := model.utterance(row)).start == typed.start:
        if (line.end, line.text) == (typed.end, typed.text):
            return row
        row -= 1
    return model.nearest_row(typed.start)


def reopen_typed(editor: LineEditor | None, model: TranscriptModel, typed: TypedLine | None) -> None:
    """Open the editor again on the typed line (`row_of`), the caret where it was."""
    if editor is None or typed is None:
        return
    if (row := row_of(model, typed)) is not None:
        editor.reopen_editor(row, typed.caret)
