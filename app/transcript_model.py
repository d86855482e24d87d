"""The transcript being edited, as a Qt table model: one row per utterance.

Columns: start, end, speaker, text. The model owns the current utterances and the speaker book;
it changes them only through `replace_rows`, `change_rows` and `set_document`, which the undo
commands in `app.commands` call. Edits typed into a view (`setData`) are turned into undo
commands, so every change is undoable. `transcript()` is the edited transcript with the current
speaker names, ready to export. Custom roles expose the utterance, its speaker's colour and id.
`read_only` is set while a transcription fills the table with live results.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QUndoStack

from app import speakers as sp
from app.timeline import format_time, nearest_utterance, parse_time, utterance_at
from engine.types import Transcript, Utterance

START, END, SPEAKER, TEXT = range(4)
HEADERS = ("Start", "End", "Speaker", "Text")
UtteranceRole = Qt.ItemDataRole.UserRole + 1
ColorRole = Qt.ItemDataRole.UserRole + 2
SpeakerIdRole = Qt.ItemDataRole.UserRole + 3
CurrentRole = Qt.ItemDataRole.UserRole + 4

Index = QModelIndex | QPersistentModelIndex


class TranscriptModel(QAbstractTableModel):
    document_changed = Signal()  # utterances or speakers changed (views refresh lanes, autosave)
    speakers_changed = Signal()
    edit_refused = Signal(str)  # why a typed edit was not accepted

    def __init__(self, undo_stack: QUndoStack, parent: Any = None) -> None:
        super().__init__(parent)
        self.undo_stack = undo_stack
        self._utterances: list[Utterance] = []
        self._starts: list[float] = []
        self._book: sp.SpeakerBook = ()
        self.meta = Transcript(utterances=())  # source, model, chunks, duration of the transcript
        self.read_only = False
        self.current_row: int | None = None

    # -- reading --------------------------------------------------------------------------
    @property
    def utterances(self) -> tuple[Utterance, ...]:
        return tuple(self._utterances)

    @property
    def book(self) -> sp.SpeakerBook:
        return self._book

    def utterance(self, row: int) -> Utterance:
        return self._utterances[row]

    def transcript(self) -> Transcript:
        return replace(self.meta, utterances=self.utterances, speakers=sp.engine_speakers(self._book))

    def row_at(self, t: float) -> int | None:
        ends = [u.end for u in self._utterances]
        return utterance_at(self._starts, ends, t)

    def nearest_row(self, t: float) -> int | None:
        return nearest_utterance(self._starts, [u.end for u in self._utterances], t)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._utterances)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        return base if self.read_only else base | Qt.ItemFlag.ItemIsEditable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        u = self._utterances[index.row()]
        col = index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self._display(u, col, role == Qt.ItemDataRole.EditRole)
        if role == Qt.ItemDataRole.ToolTipRole and col == SPEAKER:
            return f"{sp.display_name(self._book, u.speaker)} — change with the speaker menu or Ctrl+1…9"
        if role == UtteranceRole:
            return u
        if role == ColorRole:
            return QColor(sp.display_color(self._book, u.speaker))
        if role == SpeakerIdRole:
            return u.speaker
        if role == CurrentRole:
            return index.row() == self.current_row
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{format_time(u.start)}, {sp.display_name(self._book, u.speaker)}: {u.text}"
        return None

    def _display(self, u: Utterance, col: int, editing: bool) -> Any:
        if col == START:
            return format_time(u.start)
        if col == END:
            return format_time(u.end)
        if col == SPEAKER:
            return u.speaker if editing else sp.display_name(self._book, u.speaker)
        return u.text

    # -- editing from views (each edit becomes an undo command) ----------------------------
    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        from app import commands

        if self.read_only or role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        row, col, u = index.row(), index.column(), self._utterances[index.row()]
        try:
            if col == TEXT:
                commands.edit_text(self, row, str(value))
            elif col == SPEAKER:
                commands.set_speaker(self, [row], value or None)
            else:
                t = parse_time(str(value))
                start, end = (t, u.end) if col == START else (u.start, t)
                commands.retime(self, row, start, end)
        except ValueError as exc:
            self.edit_refused.emit(str(exc))
            return False
        return True

    # -- changes (called by undo commands only) --------------------------------------------
    def set_document(self, utterances: Sequence[Utterance], book: sp.SpeakerBook, meta: Transcript) -> None:
        self.beginResetModel()
        self._utterances, self._book, self.meta = list(utterances), tuple(book), meta
        self._starts = [u.start for u in self._utterances]
        self.current_row = None
        self.endResetModel()
        self.speakers_changed.emit()
        self.document_changed.emit()

    def replace_rows(self, first: int, count: int, new: Sequence[Utterance]) -> None:
        if count == len(new):
            self._utterances[first : first + count] = new
            self._rows_changed(first, first + count - 1)
        else:
            if count:
                self.beginRemoveRows(QModelIndex(), first, first + count - 1)
                del self._utterances[first : first + count]
                self.endRemoveRows()
            if new:
                self.beginInsertRows(QModelIndex(), first, first + len(new) - 1)
                self._utterances[first:first] = new
                self.endInsertRows()
        self._starts = [u.start for u in self._utterances]
        self.document_changed.emit()

    def change_rows(self, rows: Mapping[int, Utterance], book: sp.SpeakerBook | None = None) -> None:
        for row, u in rows.items():
            self._utterances[row] = u
        self._starts = [u.start for u in self._utterances]
        if book is not None and book != self._book:
            self._book = tuple(book)
            self._rows_changed(0, len(self._utterances) - 1)
            self.speakers_changed.emit()
        else:
            for row in sorted(rows):
                self._rows_changed(row, row)
        self.document_changed.emit()

    def set_current_row(self, row: int | None) -> None:
        """The utterance playing now (drawn highlighted)."""
        if row == self.current_row:
            return
        old, self.current_row = self.current_row, row
        for r in (old, row):
            if r is not None and 0 <= r < len(self._utterances):
                self._rows_changed(r, r)

    def insertion_row(self, start: float) -> int:
        return bisect.bisect_right(self._starts, start)

    def _rows_changed(self, first: int, last: int) -> None:
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(HEADERS) - 1))
