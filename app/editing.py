"""The window's edit commands that need the view's context: which rows, where the cursor is.

`EditActions` reads the selection (and the text cursor while a line is being edited, or the
playhead) from the transcript view and applies the matching function of `app.commands`. A refused
edit is reported through `message`, never raised into Qt. Besides split, merge, nudges and speaker
assignment: delete the selected lines, insert an empty line, go to a time, shift every time by an
offset, and merge consecutive lines of one speaker — each one undo step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QInputDialog, QWidget

from app import commands
from app import speakers as sp
from app.timeline import parse_time
from app.transcript_model import TranscriptModel
from app.widgets.transcript_view import TranscriptView

if TYPE_CHECKING:
    from app.widgets.spell_check import SpellCheck

NUDGE = 0.1  # seconds per boundary nudge


def ask(parent: QWidget, title: str, label: str, then: Callable[[str], object]) -> None:
    """A one-line question; `then(answer)` when the user confirms an answer."""
    text, ok = QInputDialog.getText(parent, title, label)
    if ok and text.strip():
        then(text)


class EditActions(QObject):
    message = Signal(str)

    def __init__(self, model: TranscriptModel, view: TranscriptView, playhead: Callable[[], float],
                 seek: Callable[[float], None], parent: QObject | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.model, self.view, self.playhead, self.seek = model, view, playhead, seek

    def _guarded(self, action: Callable[[], None]) -> bool:
        if self.model.read_only:
            self.message.emit("The transcript can be edited when the transcription has finished")
            return False
        try:
            action()
        except ValueError as exc:
            self.message.emit(str(exc))
            return False
        return True

    def _row(self) -> int | None:
        row = self.view.current_source_row()
        if row is None:
            self.message.emit("Select an utterance first")
        return row

    def split(self) -> bool:
        """Split at the text cursor while editing; else at the playhead if inside; else mid-text."""
        editing = self.view.edit_cursor()
        if editing is not None:
            row, cursor = editing
            self.view.commit_open_editor()
        else:
            row = self._row()
            if row is None:
                return False
            cursor = self._cursor_at_playhead(row)
        ok = self._guarded(lambda: commands.split(self.model, row, cursor))
        if ok:
            self.view.select_row(row + 1)
        return ok

    def _cursor_at_playhead(self, row: int) -> int:
        u = self.model.utterance(row)
        t = self.playhead()
        if u.start < t < u.end and u.words:
            before = [w for w in u.words if w.end <= t]
            text = " ".join(w.text for w in before)
            if 0 < len(text) < len(u.text):
                return len(text)
        if u.start < t < u.end:
            return round(len(u.text) * (t - u.start) / u.duration)
        return len(u.text) // 2 if " " not in u.text else u.text.rfind(" ", 0, len(u.text) // 2 + 1)

    def merge(self) -> bool:
        row = self._row()
        return row is not None and self._guarded(lambda: commands.merge_with_next(self.model, row))

    def nudge(self, which: str, delta: float) -> bool:
        row = self._row()
        if row is None:
            return False
        u = self.model.utterance(row)
        start, end = (u.start + delta, u.end) if which == "start" else (u.start, u.end + delta)
        ok = self._guarded(lambda: commands.retime(self.model, row, start, end))
        if ok:
            moved = next(i for i, x in enumerate(self.model.utterances) if (x.start, x.end) == (start, end))
            self.view.select_row(moved)
        return ok

    def set_at_playhead(self, which: str) -> bool:
        """The selected line's start (`which` "start") or end ("end") moved to the playhead."""
        row = self._row()
        if row is None:
            return False
        u, t = self.model.utterance(row), self.playhead()
        return self.nudge(which, t - (u.start if which == "start" else u.end))

    def next_misspelling(self, spelling: SpellCheck) -> bool:
        """Open the editor on the next misspelled word after the caret (or the selected line),
        the word selected: typing replaces it, a right-click offers corrections."""
        at = self.view.edit_cursor()
        row, offset = at if at is not None else (self.view.current_source_row() or 0, 0)
        self.view.commit_open_editor()
        found = spelling.next_in([u.text for u in self.model.utterances], row, offset)
        if found is None:
            return False
        row, start, end = found
        editor = self.view.edit_text(row)
        if editor is None:
            return False
        cursor = editor.textCursor()
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        editor.setTextCursor(cursor)
        return True

    def assign(self, number: int) -> bool:
        """Give the selected utterances speaker `number` (1-based, book order); 0 unassigns."""
        rows = self.view.selected_source_rows()
        if not rows:
            self.message.emit("Select an utterance first")
            return False
        if number and number > len(self.model.book):
            self.message.emit(f"There is no speaker {number}; add one in the speaker panel")
            return False
        speaker = self.model.book[number - 1].id if number else None
        ok = self._guarded(lambda: commands.set_speaker(self.model, rows, speaker))
        if ok:
            self.message.emit(f"{len(rows)} utterance(s) → {sp.display_name(self.model.book, speaker)}")
        return ok

    def new_speaker(self) -> sp.SpeakerInfo | None:
        info: list[sp.SpeakerInfo] = []
        self._guarded(lambda: info.append(commands.add_speaker(self.model)))
        return info[0] if info else None

    def delete_lines(self) -> bool:
        rows = self.view.selected_source_rows()
        if not rows:
            self.message.emit("Select the lines to delete")
            return False
        ok = self._guarded(lambda: commands.delete_rows(self.model, rows))
        if ok and self.model.rowCount():
            self.view.select_row(min(rows[0], self.model.rowCount() - 1))
        return ok

    def insert_line(self) -> bool:
        """An empty line after the selected one (or at the playhead), its editor open."""
        row = self.view.current_source_row()
        found: list[int] = []
        ok = self._guarded(lambda: found.append(commands.insert_empty(self.model, row, self.playhead())))
        if ok:
            self.view.edit_text(found[0])
        return ok

    def go_to(self, text: str) -> bool:
        """Select the line at (or nearest) the time typed as h:mm:ss and move the playhead there."""
        try:
            t = parse_time(text)
        except ValueError as exc:
            self.message.emit(str(exc))
            return False
        row = self.model.nearest_row(t)
        if row is not None:
            self.view.select_row(row)
        self.seek(t)
        return True

    def shift_times(self, text: str) -> bool:
        """Move every time by the offset typed as seconds or [-]h:mm:ss ("-1:30" is 90 s earlier)."""
        text = text.strip()
        sign = -1.0 if text.startswith("-") else 1.0
        try:
            seconds = sign * parse_time(text.lstrip("+-"))
        except ValueError as exc:
            self.message.emit(str(exc))
            return False
        ok = self._guarded(lambda: commands.shift_all(self.model, seconds))
        if ok:
            self.message.emit(f"Every time moved by {seconds:+.2f} s")
        return ok

    def merge_same_speaker(self) -> bool:
        """Join consecutive lines of one speaker: among the selected lines if several, else all."""
        rows = self.view.selected_source_rows()
        found: list[int] = []
        chosen = rows if len(rows) > 1 else None
        ok = self._guarded(lambda: found.append(commands.merge_same_speaker(self.model, chosen)))
        if ok:
            self.message.emit(f"Merged: {found[0]} line(s) fewer")
        return ok
