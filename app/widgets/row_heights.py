"""Row heights of the transcript table from each row's wrapped text, set one row at a time.

`RowHeights.fit(first, last)` sets rows now; `fit_soon(first, last)` sets the rows in view now and
leaves the others to idle slices of `SWEEP_ROWS` rows (a bulk edit changes thousands of rows nobody
sees yet), keeping the top row where it was when rows above it change height. A text measured
before at the same text width and font is not measured again (undo and redo bring old texts back).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QTableView

from app.widgets.transcript_delegates import text_height

HEIGHTS_KEPT = 50_000  # measured heights remembered (texts), then forgotten at once
SWEEP_ROWS = 100  # rows out of view refitted per idle slice (10-15 ms on a loaded machine)


class RowHeights(QObject):
    def __init__(self, view: QTableView, column: int) -> None:
        super().__init__(view)
        self.view, self.column = view, column
        self._heights: dict[str, int] = {}  # text → height at `_measured` (text width, font)
        self._measured: tuple[int, str] = (-1, "")
        self._sweep = QTimer(self, singleShot=True, interval=20)
        self._sweep.timeout.connect(self._sweep_slice)
        self._sweep_at = 0

    def fit(self, first: int, last: int) -> None:
        """Height of view rows first…last from their wrapped text (O(rows))."""
        view = self.view
        width, metrics, model = view.columnWidth(self.column), view.fontMetrics(), view.model()
        rows = view.verticalHeader()
        if (width, view.font().key()) != self._measured or len(self._heights) > HEIGHTS_KEPT:
            self._heights, self._measured = {}, (width, view.font().key())
        heights = self._heights
        for row in range(first, last + 1):
            text = model.index(row, self.column).data(Qt.ItemDataRole.DisplayRole) or ""
            height = heights.get(text)
            if height is None:
                height = heights[text] = text_height(metrics, text, width)
            rows.resizeSection(row, height)

    def fit_soon(self, first: int, last: int) -> None:
        """Fit rows first…last that are in view now; the others in idle slices."""
        view = self.view
        top, bottom = view.rowAt(0), view.rowAt(view.viewport().height() - 1)
        if top < 0:  # nothing laid out yet
            self.fit(first, last)
            return
        bottom = view.model().rowCount() - 1 if bottom < 0 else bottom
        if max(first, top) <= min(last, bottom):
            self.fit(max(first, top), min(last, bottom))
        if first < top or last > bottom:
            self._sweep_at = 0  # rows may have moved since an earlier request: sweep them all
            self._sweep.start()

    def _sweep_slice(self) -> None:
        view = self.view
        count, first = view.model().rowCount(), self._sweep_at
        last = min(first + SWEEP_ROWS, count) - 1
        if last < first:
            return
        top = view.rowAt(0)
        offset = view.rowViewportPosition(top) if top >= 0 else 0
        self.fit(first, last)  # texts measured before come from the cache: mostly lookups
        if top >= 0 and first < top:  # rows above changed height: keep the reader's place
            view.verticalScrollBar().setValue(view.rowViewportPosition(top) + view.verticalOffset() - offset)
        self._sweep_at = last + 1
        if self._sweep_at < count:
            self._sweep.start()
