"""The transcript being edited, as a Qt table model: one row per utterance.

Columns: start, end, speaker, text. The model owns the current utterances and the speaker book;
it changes them only through `replace_rows`, `change_rows` and `set_document`, which the undo
commands in `app.commands` call. Edits typed into a view (`setData`) are turned into undo
commands, so every change is undoable. A change costs O(rows it touches): it emits `dataChanged`
for each run of touched rows (only the speaker column when only the speaker book changed),
`beginInsertRows`/`beginRemoveRows` when the row count changes, and `turns_changed(ids)` naming
the speakers whose turns (times, membership) moved, so lanes and talk times update only those;
only `set_document` resets the model. `transcript()` is the edited transcript with the current
speaker names, ready to export. Custom roles expose the utterance, its speaker's colour and id.
`read_only` is set while a transcription fills the table with live results.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
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
EDITABLE = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable
READ_ONLY = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
DISPLAY, EDIT = int(Qt.ItemDataRole.DisplayRole.value), int(Qt.ItemDataRole.EditRole.value)
TOOLTIP, ACCESSIBLE = int(Qt.ItemDataRole.ToolTipRole.value), int(Qt.ItemDataRole.AccessibleTextRole.value)
UTTERANCE, COLOR, SPEAKER_ID, CURRENT = UtteranceRole, ColorRole, SpeakerIdRole, CurrentRole
ALIGN, INK, TINT = (int(r.value) for r in (Qt.ItemDataRole.TextAlignmentRole, Qt.ItemDataRole.ForegroundRole,
                                           Qt.ItemDataRole.BackgroundRole))  # fmt: skip
ROLES = frozenset(
    (DISPLAY, EDIT, TOOLTIP, ACCESSIBLE, UTTERANCE, COLOR, SPEAKER_ID, CURRENT, ALIGN, INK, TINT)
)
RIGHT_TOP = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop  # computed once: enum "|" is slow
LEFT_TOP = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
TIME_INK = QColor("#5B6670")
CURRENT_TINT = QColor("#FFF1C2")  # the line being heard


class TranscriptModel(QAbstractTableModel):
    document_changed = Signal()  # anything changed (cheap listeners only: actions, title)
    speakers_changed = Signal()  # the speaker book changed (names, colours, order)
    turns_changed = Signal(object)  # frozenset of speaker ids whose turns changed; None: all
    edit_refused = Signal(str)  # why a typed edit was not accepted

    def __init__(self, undo_stack: QUndoStack, parent: Any = None) -> None:
        super().__init__(parent)
        self.undo_stack = undo_stack
        self._utterances: list[Utterance] = []
        self._starts: list[float] = []
        self._ends: list[float] = []
        self._stats: dict[str | None, tuple[float, int]] = {}  # speaker → (seconds, turns)
        self._book: sp.SpeakerBook = ()
        self._colors: dict[str | None, QColor] = {}
        self._names: dict[str | None, str] = {}
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
        return utterance_at(self._starts, self._ends, t)

    def nearest_row(self, t: float) -> int | None:
        return nearest_utterance(self._starts, self._ends, t)

    def stats(self) -> dict[str | None, tuple[float, int]]:
        """Seconds spoken and number of turns per speaker id (None: unassigned)."""
        return dict(self._stats)

    def turns(self, speaker_id: str | None) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(starts, ends) of one speaker's turns, in time order."""
        rows = [u for u in self._utterances if u.speaker == speaker_id]
        return tuple(u.start for u in rows), tuple(u.end for u in rows)

    def rowCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._utterances)

    def columnCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(HEADERS)

    def index(self, row: int, column: int, parent: Index | None = None) -> QModelIndex:
        # one Python call per index instead of Qt's hasIndex → rowCount + columnCount
        inside = 0 <= row < len(self._utterances) and 0 <= column < len(HEADERS)
        if inside and (parent is None or not parent.isValid()):
            return self.createIndex(row, column)
        return QModelIndex()

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        return READ_ONLY if self.read_only else EDITABLE

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        # called for every visible cell and role on each repaint: plain int comparisons only
        role = int(role)
        if role not in ROLES or not index.isValid():
            return None
        u = self._utterances[index.row()]
        col = index.column()
        if role in (DISPLAY, EDIT):
            return self._display(u, col, role == EDIT)
        if role == ALIGN:
            return RIGHT_TOP if col in (START, END) else LEFT_TOP
        if role == TINT:
            return CURRENT_TINT if index.row() == self.current_row else None
        if role == INK:
            return TIME_INK if col in (START, END) else None
        if role == COLOR:
            return self._colors.get(u.speaker) or QColor(sp.UNASSIGNED_COLOR)
        if role == CURRENT:
            return index.row() == self.current_row
        if role == TOOLTIP and col == SPEAKER:
            return f"{sp.display_name(self._book, u.speaker)} — change with the speaker menu or Ctrl+1…9"
        if role == UTTERANCE:
            return u
        if role == SPEAKER_ID:
            return u.speaker
        if role == ACCESSIBLE:
            return f"{format_time(u.start)}, {sp.display_name(self._book, u.speaker)}: {u.text}"
        return None

    def _display(self, u: Utterance, col: int, editing: bool) -> Any:
        if col == START:
            return format_time(u.start)
        if col == END:
            return format_time(u.end)
        if col == SPEAKER:
            if editing:
                return u.speaker
            return self._names.get(u.speaker) or sp.display_name(self._book, u.speaker)
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
        self._index_book()
        self._starts = [u.start for u in self._utterances]
        self._ends = [u.end for u in self._utterances]
        self._stats = {}
        self._count(self._utterances, +1)
        self.current_row = None
        self.endResetModel()
        self.speakers_changed.emit()
        self.turns_changed.emit(None)
        self.document_changed.emit()

    def replace_rows(self, first: int, count: int, new: Sequence[Utterance]) -> None:
        """Rows first … first+count-1 become `new` (inserted/removed rows announced as such)."""
        old = self._utterances[first : first + count]
        if count == len(new):
            self._utterances[first : first + count] = new
            self._starts[first : first + count] = [u.start for u in new]
            self._ends[first : first + count] = [u.end for u in new]
            self._rows_changed(first, first + count - 1)
        else:
            if count:
                self.beginRemoveRows(QModelIndex(), first, first + count - 1)
                del self._utterances[first : first + count]
                del self._starts[first : first + count], self._ends[first : first + count]
                self.endRemoveRows()
            if new:
                self.beginInsertRows(QModelIndex(), first, first + len(new) - 1)
                self._utterances[first:first] = new
                self._starts[first:first] = [u.start for u in new]
                self._ends[first:first] = [u.end for u in new]
                self.endInsertRows()
        self._count(old, -1)
        self._count(new, +1)
        moved = {u.speaker for u in old if (u.start, u.end, u.speaker) not in _spans(new)}
        moved |= {u.speaker for u in new if (u.start, u.end, u.speaker) not in _spans(old)}
        if moved:
            self.turns_changed.emit(frozenset(moved))
        self.document_changed.emit()

    def change_rows(self, rows: Mapping[int, Utterance], book: sp.SpeakerBook | None = None) -> None:
        """Rows keep their places with new contents; optionally a new speaker book."""
        moved: set[str | None] = set()
        old = [self._utterances[r] for r in rows]
        for row, u in rows.items():
            before = self._utterances[row]
            if (before.start, before.end, before.speaker) != (u.start, u.end, u.speaker):
                moved |= {before.speaker, u.speaker}
            self._utterances[row] = u
            self._starts[row], self._ends[row] = u.start, u.end
        self._count(old, -1)
        self._count(rows.values(), +1)
        book_changed = book is not None and tuple(book) != self._book
        if book_changed:
            self._book = tuple(book or ())
            self._index_book()
            if self._utterances:  # chips show names and colours: one range, the speaker column only
                self.dataChanged.emit(self.index(0, SPEAKER), self.index(len(self._utterances) - 1, SPEAKER))
        for first, last in _runs(sorted(rows)):
            self._rows_changed(first, last)
        if book_changed:
            self.speakers_changed.emit()
        if moved:
            self.turns_changed.emit(frozenset(moved))
        self.document_changed.emit()

    def _index_book(self) -> None:
        self._colors = {s.id: QColor(s.color) for s in self._book}
        self._names = {s.id: s.name for s in self._book}

    def _count(self, utterances: Iterable[Utterance], sign: int) -> None:
        for u in utterances:
            seconds, turns = self._stats.get(u.speaker, (0.0, 0))
            seconds, turns = seconds + sign * u.duration, turns + sign
            if turns:
                self._stats[u.speaker] = (max(seconds, 0.0), turns)
            else:
                self._stats.pop(u.speaker, None)

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


def _spans(utterances: Sequence[Utterance]) -> set[tuple[float, float, str | None]]:
    return {(u.start, u.end, u.speaker) for u in utterances}


def _runs(rows: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted rows as (first, last) runs of consecutive numbers."""
    runs: list[tuple[int, int]] = []
    for r in rows:
        if runs and r == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], r)
        else:
            runs.append((r, r))
    return runs
