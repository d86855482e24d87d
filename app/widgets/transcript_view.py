"""The transcript table: time, a speaker chip in the speaker's colour, and the editable text.

`TranscriptView` shows a `TranscriptModel` through `SpeakerFilter` (filter by speaker) and keeps
the view thin: it reports the selected source row (`row_selected`) and where the text caret is
while a line is edited (`caret_moved(row, position)`, for "split at the cursor" and seeking to the
word), selects and scrolls to a row on request. Row heights follow the wrapped text and are set
one row at a time (inserted rows, rows whose data changed), never by a full relayout: rows in
view at once, rows out of view in idle slices (a bulk edit changes thousands nobody sees yet),
keeping the top row in place (`RowHeights`); a width change refits every row once, after the resize settles.
A model reset (a finished transcription) keeps the selected moment and the scroll position: the
view re-selects the utterance nearest the selected time and scrolls back to the time at the top.
The time columns show "10:00:00.0" whole in the view's style and font (`ColumnWidths`);
`columns_resized(widths)` reports the start, end and speaker widths the user dragged (settled),
`set_column_widths` restores them.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from app.transcript_model import END, SPEAKER, START, TEXT, TranscriptModel
from app.widgets.column_widths import ColumnWidths
from app.widgets.line_text_edit import LineTextEdit
from app.widgets.row_heights import RowHeights
from app.widgets.transcript_delegates import RowDelegate, SpeakerDelegate, TextDelegate

DISPLAY_ROLE = int(Qt.ItemDataRole.DisplayRole.value)
ALL = "\x00all"  # the filter value that shows every speaker
Index = QModelIndex | QPersistentModelIndex
EDIT_KEY = QAbstractItemView.EditTrigger.EditKeyPressed
SELECT_ROW = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows


class SpeakerFilter(QSortFilterProxyModel):
    """Rows of one speaker (an id, None for unassigned), or all rows with `ALL`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.speaker: str | None = ALL

    def set_speaker(self, speaker: str | None) -> None:
        if speaker == self.speaker:
            return
        self.beginFilterChange()
        self.speaker = speaker
        self.endFilterChange()

    def filterAcceptsRow(self, row: int, parent: Index) -> bool:
        if self.speaker == ALL:
            return True
        model = self.sourceModel()
        return model.utterance(row).speaker == self.speaker  # type: ignore[attr-defined]


class TranscriptView(QTableView):
    row_selected = Signal(int)  # a source row
    columns_resized = Signal(list)  # [start, end, speaker] widths in pixels, after a drag settles
    caret_moved = Signal(int, int)  # source row, character position of the caret while editing

    def __init__(self, model: TranscriptModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = model
        self.filter = SpeakerFilter(self)
        self.filter.setSourceModel(model)
        self.setModel(self.filter)
        self.setItemDelegate(RowDelegate(self))
        self.row_delegate = TextDelegate(self)
        self.setItemDelegateForColumn(TEXT, self.row_delegate)
        self.setItemDelegateForColumn(SPEAKER, SpeakerDelegate(self))
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        triggers = QAbstractItemView.EditTrigger
        self.setEditTriggers(triggers.DoubleClicked | triggers.EditKeyPressed | triggers.SelectedClicked)
        self.setWordWrap(True)
        self.setShowGrid(False)
        self.setAlternatingRowColors(True)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        rows = self.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.horizontalHeader()
        header.setSectionResizeMode(TEXT, QHeaderView.ResizeMode.Stretch)
        self.columns = ColumnWidths(self, START, END, SPEAKER)
        self.columns.resized.connect(self.columns_resized)
        self.setAccessibleName("Transcript")
        self.setAccessibleDescription("One row per utterance: start, end, speaker and text. F2 or a click "
                                      "on the selected line edits, Enter commits, Tab goes to the next "
                                      "line, Escape cancels.")  # fmt: skip
        self.heights = RowHeights(self, TEXT)
        self._refit = QTimer(self, singleShot=True, interval=60)
        self._refit.timeout.connect(self.fit_all_rows)
        self._anchor: tuple[float | None, float | None, int] | None = None
        self._click: tuple[QPersistentModelIndex, QPoint] | None = None
        self.selectionModel().currentRowChanged.connect(self._on_current)
        f = self.filter
        f.rowsInserted.connect(lambda _p, first, last: self.heights.fit_soon(first, last))
        f.dataChanged.connect(self._on_data_changed)
        f.modelAboutToBeReset.connect(self._remember_anchor)
        f.modelReset.connect(self._after_reset)
        f.layoutChanged.connect(self.fit_all_rows)
        header.sectionResized.connect(self._on_section_resized)
        self.row_delegate.move_requested.connect(self._edit_neighbour)
        self.row_delegate.editing.connect(self._watch_editor)

    # -- columns -----------------------------------------------------------------------------
    def column_widths(self) -> list[int]:
        return self.columns.widths()

    def set_column_widths(self, widths: object) -> None:
        """Restore remembered widths (anything but three sensible numbers is ignored)."""
        self.columns.restore(widths)

    def _on_section_resized(self, col: int, _old: int, _new: int) -> None:
        if col == TEXT:
            self._refit.start()

    # -- rows and heights ------------------------------------------------------------------
    def fit_rows(self, first: int, last: int) -> None:
        """Height of view rows first…last from their wrapped text (`RowHeights.fit`)."""
        self.heights.fit(first, last)

    def fit_all_rows(self) -> None:
        """Refit every row (the text column's width changed), keeping the reader's place."""
        if not self.filter.rowCount():
            return
        current = self.currentIndex().row()  # -1 (no row) when none is current: never shown
        shown = 0 <= self.rowViewportPosition(current) < self.viewport().height()
        anchor = current if shown else self.rowAt(0)  # the selected line if in view, else the top one
        offset = self.rowViewportPosition(anchor)
        self.fit_rows(0, self.filter.rowCount() - 1)
        if anchor >= 0:
            self._scroll_row_to(anchor, offset)
            if shown:
                self.scrollTo(self.currentIndex())

    def _on_data_changed(self, top: QModelIndex, bottom: QModelIndex, roles: list[int] = ()) -> None:
        if top.column() <= TEXT <= bottom.column() and (not roles or DISPLAY_ROLE in map(int, roles)):
            self.heights.fit_soon(top.row(), bottom.row())

    # -- keeping the reader's place across a reset -------------------------------------------
    def _time_of(self, proxy_row: int) -> float | None:
        return None if proxy_row < 0 else self.source.utterance(self.source_row(proxy_row)).start

    def _remember_anchor(self) -> None:
        top = self.rowAt(0)  # -1 (no time) when no row is there
        self._anchor = (
            self._time_of(self.currentIndex().row()),
            self._time_of(top),
            self.rowViewportPosition(top),
        )

    def _after_reset(self) -> None:
        """The reader's place kept; the rows in view fitted now, the others while idle (a new
        document of thousands of lines is shown without measuring them all first)."""
        anchor, self._anchor = self._anchor, None
        if anchor is not None:  # in an empty document no row is near either time
            selected, top, offset = anchor
            if top is not None and (row := self._proxy_row_near(top)) is not None:
                self._scroll_row_to(row, offset)
            if selected is not None and (row := self.source.nearest_row(selected)) is not None:
                index = self.filter.mapFromSource(self.source.index(row, TEXT))
                if index.isValid():
                    self.selectionModel().setCurrentIndex(index, SELECT_ROW)
        if self.filter.rowCount():  # the top row stays where it is as rows above it are fitted
            self.heights.fit_soon(0, self.filter.rowCount() - 1)

    def _scroll_row_to(self, row: int, y: int) -> None:
        """Scroll so view row `row` starts `y` px below the top (the range first fits refitted rows)."""
        self.updateGeometries()  # else a range from before a refit clamps the value: the line is lost
        self.verticalScrollBar().setValue(self.rowViewportPosition(row) + self.verticalOffset() - y)

    def _proxy_row_near(self, t: float) -> int | None:
        row = self.source.nearest_row(t)
        if row is None:
            return None
        index = self.filter.mapFromSource(self.source.index(row, TEXT))
        return index.row() if index.isValid() else None

    # -- selection -------------------------------------------------------------------------
    def source_row(self, proxy_row: int) -> int:
        return self.filter.mapToSource(self.filter.index(proxy_row, TEXT)).row()

    def current_source_row(self) -> int | None:
        index = self.currentIndex()
        return self.filter.mapToSource(index).row() if index.isValid() else None

    def selected_source_rows(self) -> list[int]:
        rows = {self.filter.mapToSource(i).row() for i in self.selectionModel().selectedRows()}
        current = self.current_source_row()
        return sorted(rows) if rows else ([] if current is None else [current])

    def select_row(self, row: int, column: int = TEXT) -> None:
        """Make source `row` current and selected and scroll to it (no-op if it is filtered out)."""
        index = self.filter.mapFromSource(self.source.index(row, column))
        if not index.isValid():
            return
        self.selectionModel().setCurrentIndex(index, SELECT_ROW)
        self.scrollTo(index)  # the least scroll that shows it (Qt's EnsureVisible)

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.row_selected.emit(self.filter.mapToSource(current).row())

    # -- editing ---------------------------------------------------------------------------
    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        # a click on the selected line opens its editor a moment later (after the double-click
        # interval) without the event: remember where it landed, for the caret
        point = event.position().toPoint()
        self._click = (QPersistentModelIndex(self.indexAt(point)), point)
        super().mouseReleaseEvent(event)

    def edit(self, index: QModelIndex, trigger: Any = None, event: QEvent | None = None) -> bool:  # type: ignore[override]
        if trigger is None:
            return super().edit(index)
        opened = super().edit(index, trigger, event)
        editor = self.row_delegate.editor
        if opened and editor is not None and index.column() == TEXT and trigger != EDIT_KEY:
            point = event.position().toPoint() if isinstance(event, QMouseEvent) else None
            if point is None and self._click is not None and self._click[0] == QPersistentModelIndex(index):
                point = self._click[1]
            self.row_delegate.place_caret(editor, point)
            self._click = None
        return opened

    def edit_text(self, row: int) -> LineTextEdit | None:
        """Open the text editor on source `row` (caret at the end); the editor, or None."""
        self.select_row(row)
        index = self.filter.mapFromSource(self.source.index(row, TEXT))
        if not index.isValid() or not self.edit(index, EDIT_KEY):
            return None
        return self.row_delegate.editor

    def reopen_editor(self, row: int, caret: int) -> None:
        """Open the text editor on source `row` again with the caret at `caret` (after a swap)."""
        if (editor := self.edit_text(row)) is not None:
            editor.setCursorPosition(caret)

    def _edit_neighbour(self, step: int) -> None:
        current = self.currentIndex()
        target = current.row() + step if current.isValid() else -1
        if 0 <= target < self.filter.rowCount():
            QTimer.singleShot(0, lambda: self.edit_text(self.source_row(target)))

    def _watch_editor(self, editor: LineTextEdit | None) -> None:
        if editor is not None:
            editor.cursorPositionChanged.connect(self._on_caret)

    def _on_caret(self) -> None:
        found = self.edit_cursor()
        if found is not None:
            self.caret_moved.emit(*found)

    def edit_cursor(self) -> tuple[int, int] | None:
        """(source row, character position) of the text being edited, if any."""
        editor, row = self.row_delegate.editor, self.row_delegate.editor_row
        if editor is None or row is None:
            return None
        return self.filter.mapToSource(self.filter.index(row, TEXT)).row(), editor.cursorPosition()

    def is_editing(self) -> bool:
        return self.state() == QAbstractItemView.State.EditingState

    def commit_open_editor(self) -> None:
        """Write the text being typed (if any) into the model, closing the editor."""
        editor = self.row_delegate.editor
        if editor is not None:
            self.commitData(editor)
            self.closeEditor(editor, TextDelegate.EndEditHint.NoHint)
