"""The transcript table's start, end and speaker columns (`ColumnWidths`).

The time columns are as wide as the view's style needs to show "10:00:00.0" whole in the view's
font: the cell's padding from the style sheet and the style's text margins are counted, not only
the digits (a width from the digits alone cut "1:20:57.7" to "1:20:3…"). They are set to that width
when the view is made, and fitted again when it is polished and when its style or font changes (a
theme, a larger font), then only widened: a width the user chose that shows the times whole is
kept. `widths()` gives the start, end and speaker widths; `restore(widths)` puts back remembered
ones (anything but three sensible numbers is ignored); `resized(widths)` is emitted once a drag of
one of them has settled.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, QTimer, Signal
from PySide6.QtWidgets import QHeaderView, QStyle, QStyleOptionViewItem, QTableView

LONGEST_TIME = "10:00:00.0"
SPEAKER_WIDTH = 130
SETTLE_MS = 300  # a drag has settled when the width has not changed for this long
REFIT_ON = (QEvent.Type.Polish, QEvent.Type.StyleChange, QEvent.Type.FontChange)


class ColumnWidths(QObject):
    resized = Signal(list)  # [start, end, speaker] widths in pixels, after a drag settles

    def __init__(self, view: QTableView, start: int, end: int, speaker: int) -> None:
        super().__init__(view)
        self.view, self.columns, self.times = view, (start, end, speaker), (start, end)
        header = view.horizontalHeader()
        for col in self.columns:
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
        view.setColumnWidth(speaker, SPEAKER_WIDTH)
        for col in self.times:  # exactly what a time needs now (the header's default is 100 px)
            view.setColumnWidth(col, self.time_width())
        self._settled = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settled.timeout.connect(lambda: self.resized.emit(self.widths()))
        header.sectionResized.connect(self._on_resized)
        view.installEventFilter(self)

    def time_width(self) -> int:
        """Pixels a time cell needs to show `LONGEST_TIME` whole, in the view's style and font."""
        option = QStyleOptionViewItem()
        self.view.initViewItemOption(option)
        option.text = LONGEST_TIME
        option.features |= QStyleOptionViewItem.ViewItemFeature.HasDisplay
        style = self.view.style()
        return style.sizeFromContents(QStyle.ContentsType.CT_ItemViewItem, option, QSize(), self.view).width()

    def fit_times(self) -> None:
        """Widen each time column that is too narrow to show a time whole."""
        need = self.time_width()
        for col in self.times:
            if self.view.columnWidth(col) < need:
                self.view.setColumnWidth(col, need)

    def widths(self) -> list[int]:
        return [self.view.columnWidth(col) for col in self.columns]

    def restore(self, widths: object) -> None:
        if isinstance(widths, list) and len(widths) == 3 and all(isinstance(w, int) and 20 <= w <= 2000
                                                                  for w in widths):  # fmt: skip
            for col, width in zip(self.columns, widths, strict=True):
                self.view.setColumnWidth(col, width)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.view and event.type() in REFIT_ON:
            self.fit_times()
        return False

    def _on_resized(self, col: int, _old: int, _new: int) -> None:
        if col in self.columns and self.view.isVisible():  # widths set before it shows are not the user's
            self._settled.start()
