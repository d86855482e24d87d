"""The transcript being edited, as a Qt table model: one row per utterance.

Columns: start, end, speaker, text. The model owns the utterances and the speaker book and
changes them only through `replace_rows`, `change_rows` and `set_document`, called by the undo
commands of `app.commands` (which sees the model through a Protocol: imports run one way); typed
edits (`setData`) become undo commands too. A change costs O(rows it touches): `dataChanged` per
run of touched rows (only the columns that changed), row inserts/removes, and `turns_changed(ids)`
naming the speakers whose turns moved (once per `batched()` group); only `set_document` resets.
`shift_times` moves every time with one vectorised pass and one `dataChanged` (rows kept in a
`RowStore`, whose words follow lazily, rebuilt in idle slices). `transcript()` is the edited
transcript, ready to export; `read_only` is set during live results.
"""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QUndoStack

from app import commands
from app import speakers as sp
from app.edits import runs
from app.row_store import RowStore, TimeState, settled
from app.timeline import format_time, nearest_utterance, utterance_at
from engine.types import Transcript, Utterance

START, END, SPEAKER, TEXT = range(4)
HEADERS = ("Start", "End", "Speaker", "Text")
COLUMNS = ("start", "end", "speaker", "text")  # as `app.commands.typed` names them
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
TINT_ROLES = [TINT, CURRENT]
FOLD_ROWS = 100  # shifted rows rebuilt per idle slice (a few ms)


class TranscriptModel(QAbstractTableModel):
    document_changed = Signal()  # anything changed (cheap listeners only: actions, title)
    speakers_changed = Signal()  # the speaker book changed (names, colours, order)
    turns_changed = Signal(object)  # frozenset of speaker ids whose turns changed; None: all
    edit_refused = Signal(str)  # why a typed edit was not accepted

    def __init__(self, undo_stack: QUndoStack, parent: Any = None) -> None:
        super().__init__(parent)
        self.undo_stack = undo_stack
        self._rows = RowStore()
        self._fold = QTimer(self, singleShot=True, interval=20)  # shifted rows rebuilt while idle
        self._fold.timeout.connect(lambda: self._rows.fold(FOLD_ROWS) and self._fold.start())
        self._stats: dict[str | None, tuple[float, int]] = {}  # speaker → (seconds, turns)
        self._book: sp.SpeakerBook = ()
        self._colors: dict[str | None, QColor] = {}
        self._names: dict[str | None, str] = {}
        self.meta = Transcript(utterances=())  # source, model, chunks, duration of the transcript
        self.read_only = False
        self.current_row: int | None = None
        self._held: set[str | None] | None = None  # speakers whose turns moved while batched
        self.time_ink, self.tint = QColor("#5B6670"), QColor("#FFF1C2")  # times; the line being heard

    @contextlib.contextmanager
    def batched(self) -> Iterator[None]:
        """Many row changes as one: `turns_changed` and `document_changed` come once, at the end."""
        if self._held is not None:  # inside a batch already
            yield
            return
        self._held = set()
        try:
            yield
        finally:
            moved, self._held = self._held, None
            self._announce(moved)

    def _announce(self, moved: set[str | None]) -> None:
        if self._held is not None:
            self._held |= moved
            return
        if moved:
            self.turns_changed.emit(frozenset(moved))
        self.document_changed.emit()

    # -- reading --------------------------------------------------------------------------
    @property
    def utterances(self) -> tuple[Utterance, ...]:
        return self._rows.all()

    @property
    def book(self) -> sp.SpeakerBook:
        return self._book

    def utterance(self, row: int) -> Utterance:
        return self._rows.get(row)

    def transcript(self) -> Transcript:
        return replace(self.meta, utterances=self.utterances, speakers=sp.engine_speakers(self._book))

    def transcript_later(self) -> Callable[[], Transcript]:
        """The transcript as it is now, built when called, on any thread: shifted rows get their
        words there, not on the GUI thread (a save after Shift All Times)."""
        state, meta, speakers = self._rows.state(), self.meta, sp.engine_speakers(self._book)
        return lambda: replace(meta, utterances=settled(state), speakers=speakers)

    def row_at(self, t: float) -> int | None:
        return utterance_at(self._rows.starts, self._rows.ends, t)

    def nearest_row(self, t: float) -> int | None:
        return nearest_utterance(self._rows.starts, self._rows.ends, t)

    def stats(self) -> dict[str | None, tuple[float, int]]:
        return dict(self._stats)  # speaker id (None: unassigned) → (seconds spoken, turns)

    def turns(self, speaker_id: str | None) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(starts, ends) of one speaker's turns, in time order."""
        return self._rows.turns(speaker_id)

    def rowCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(HEADERS)

    def index(self, row: int, column: int, parent: Index | None = None) -> QModelIndex:
        # one Python call per index instead of Qt's hasIndex → rowCount + columnCount
        inside = 0 <= row < len(self._rows) and 0 <= column < len(HEADERS)
        if inside and (parent is None or not parent.isValid()):
            return self.createIndex(row, column)
        return QModelIndex()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        horizontal = orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
        return HEADERS[section] if horizontal else None

    def flags(self, index: Index) -> Qt.ItemFlag:
        return READ_ONLY if self.read_only else EDITABLE

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        # called for every visible cell and role on each repaint: plain int comparisons only
        role = int(role)
        if role not in ROLES or not index.isValid():
            return None
        u = self._rows.get(index.row())
        col = index.column()
        if role in (DISPLAY, EDIT):
            return self._display(u, col, role == EDIT)
        if role == ALIGN:
            return RIGHT_TOP if col in (START, END) else LEFT_TOP
        if role == TINT:
            return self.tint if index.row() == self.current_row else None
        if role == INK:
            return self.time_ink if col in (START, END) else None
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
        if self.read_only or role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        try:
            commands.typed(self, index.row(), COLUMNS[index.column()], value)
        except ValueError as exc:
            self.edit_refused.emit(str(exc))
            return False
        return True

    # -- changes (called by undo commands only) --------------------------------------------
    def set_document(self, utterances: Sequence[Utterance], book: sp.SpeakerBook, meta: Transcript) -> None:
        self.beginResetModel()
        self._rows, self._book, self.meta = RowStore(utterances), tuple(book), meta
        self._index_book()
        self._stats = {}
        sp.tally(self._stats, utterances, +1)
        self.current_row = None
        self.endResetModel()
        self.speakers_changed.emit()
        self.turns_changed.emit(None)
        self.document_changed.emit()

    def replace_rows(self, first: int, count: int, new: Sequence[Utterance]) -> None:
        """Rows first … first+count-1 become `new` (inserted/removed rows announced as such)."""
        old, keep = self._rows.slice(first, first + count), min(count, len(new))
        self._rows.replace(first, keep, new[:keep])  # rows both have change in place
        self._rows_changed(first, first + keep - 1)
        if count > keep:
            self.beginRemoveRows(QModelIndex(), first + keep, first + count - 1)
            self._rows.replace(first + keep, count - keep, ())
            self.endRemoveRows()
        elif len(new) > keep:
            self.beginInsertRows(QModelIndex(), first + keep, first + len(new) - 1)
            self._rows.replace(first + keep, 0, new[keep:])
            self.endInsertRows()
        sp.tally(self._stats, old, -1)
        sp.tally(self._stats, new, +1)
        self._announce(sp.moved_speakers(old, new))

    def change_rows(self, rows: Mapping[int, Utterance], book: sp.SpeakerBook | None = None) -> None:
        """Rows keep their places with new contents; optionally a new speaker book."""
        moved: set[str | None] = set()
        old = [self._rows.get(r) for r in rows]
        for (row, u), before in zip(rows.items(), old, strict=True):
            if (before.start, before.end, before.speaker) != (u.start, u.end, u.speaker):
                moved |= {before.speaker, u.speaker}
            self._rows.put(row, u)
        sp.tally(self._stats, old, -1)
        sp.tally(self._stats, rows.values(), +1)
        book_changed = book is not None and tuple(book) != self._book
        if book_changed:
            self._book = tuple(book or ())
            self._index_book()
            if self._rows:  # chips show names and colours: one range, the speaker column only
                self.dataChanged.emit(self.index(0, SPEAKER), self.index(len(self._rows) - 1, SPEAKER))
        retyped = sorted(r for r, before in zip(rows, old, strict=True) if before.text != rows[r].text)
        for first, last in runs(retyped):
            self._rows_changed(first, last)
        for first, last in runs(sorted(set(rows) - set(retyped))):  # same text: no row height to refit
            self.dataChanged.emit(self.index(first, START), self.index(last, SPEAKER))
        if book_changed:
            self.speakers_changed.emit()
        self._announce(moved)

    def _index_book(self) -> None:
        self._colors = {s.id: QColor(s.color) for s in self._book}
        self._names = {s.id: s.name for s in self._book}

    def set_current_row(self, row: int | None) -> None:
        """The utterance playing now (drawn highlighted)."""
        if row == self.current_row:
            return
        old, self.current_row = self.current_row, row
        for r in (old, row):  # only the tint changes: views neither refit nor refill editors
            if r is not None and 0 <= r < len(self._rows):
                self.dataChanged.emit(self.index(r, 0), self.index(r, len(HEADERS) - 1), TINT_ROLES)

    def insertion_row(self, start: float) -> int:
        return bisect.bisect_right(self._rows.starts, start)

    def shift_times(self, seconds: float) -> None:
        """Every time (lines and words) later by `seconds`: one vectorised pass over the start and
        end times; the rows' words follow lazily (`RowStore`). `commands.shift_all` validates it."""
        self._rows.shift(seconds)
        self._times_changed()

    def time_state(self) -> TimeState:
        return self._rows.state()

    def restore_times(self, state: TimeState) -> None:
        """The times of `state` (taken by `time_state`/`shift_times` with the same rows) again."""
        self._rows.restore(state)
        self._times_changed()

    def _times_changed(self) -> None:
        if self._rows:  # one range, the time columns only: no row height to refit
            self.dataChanged.emit(self.index(0, START), self.index(len(self._rows) - 1, END))
            self._fold.start()
        self._announce(set(self._stats))

    def _rows_changed(self, first: int, last: int) -> None:
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(HEADERS) - 1))
