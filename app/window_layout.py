"""How the main window's panes are arranged: the waveform above, in a vertical splitter (it
folds away, for small screens), the transcript column beside a scrolling column of speakers and
playback below it; in the column, the table over the word view share a splitter of their own."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QScrollArea, QSplitter, QVBoxLayout, QWidget

WAVEFORM_SHARE, SMALL_SHARE = 0.3, 0.2  # of the window splitter's height (windows under 700 px: less)


def compose(top: QWidget, main: Sequence[QWidget], side: Sequence[QWidget]) -> QSplitter:
    """`top` above, in a vertical splitter; below it the `main` column (its first two widgets,
    then the rest in a splitter whose first one takes the spare height) beside a scrolling
    `side` column."""
    left = QWidget()
    column = QVBoxLayout(left)
    column.setContentsMargins(8, 6, 4, 8)
    for widget in main[:2]:
        column.addWidget(widget)
    reading = QSplitter(Qt.Orientation.Vertical)  # the table over the word view: drag to share
    reading.setObjectName("readingSplitter")
    for widget in main[2:]:
        reading.addWidget(widget)
    reading.setStretchFactor(0, 1)
    reading.setStretchFactor(1, 0)
    reading.setCollapsible(0, False)
    column.addWidget(reading, 1)
    right = QWidget()
    stack = QVBoxLayout(right)
    stack.setContentsMargins(4, 6, 8, 8)
    for i, widget in enumerate(side):
        stack.addWidget(widget, 1 if i == 0 else 0)
    scroll = QScrollArea()
    scroll.setWidget(right)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.Shape.NoFrame)
    scroll.setMinimumWidth(250)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setAccessibleName("Speakers and playback")
    scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    lower = QSplitter(Qt.Orientation.Horizontal)
    lower.addWidget(left)
    lower.addWidget(scroll)
    lower.setStretchFactor(0, 4)
    lower.setStretchFactor(1, 1)
    lower.setSizes([1060, 300])
    splitter = QSplitter(Qt.Orientation.Vertical)
    splitter.setObjectName("mainSplitter")
    splitter.addWidget(top)
    splitter.addWidget(lower)
    splitter.setStretchFactor(1, 1)
    splitter.setCollapsible(0, True)  # the waveform folds away on a small screen (View ▸ Show Waveform)
    splitter.setCollapsible(1, False)
    return splitter


class Panes(QObject):
    """The splitters' sizes: the waveform at its share of the height (`WAVEFORM_SHARE`, less on a
    small screen) until the user drags a handle, or folded away (`toggle`, a checkable action);
    the word view as tall as it may be, the table taking the rest."""

    def __init__(self, splitter: QSplitter, words: QWidget, toggle: QAction) -> None:
        super().__init__(splitter)
        self.splitter, self.words, self.toggle = splitter, words, toggle
        self.reading = splitter.findChild(QSplitter, "readingSplitter")
        self.moved = False
        toggle.setCheckable(True)
        toggle.setChecked(True)
        splitter.splitterMoved.connect(self._on_moved)
        self._window_height = 0

    def fit(self, window_height: int) -> None:
        self._window_height = window_height
        if not self.moved and self.toggle.isChecked():
            self.show_waveform(True)
        if self.reading is not None:
            words = min(
                self.words.maximumHeight(), max(self.reading.height() // 3, self.words.minimumHeight())
            )
            self.reading.setSizes([max(self.reading.height() - words, 1), words])

    def show_waveform(self, shown: bool) -> None:
        """Fold the waveform away (the transcript takes its room) or bring it back at its share."""
        height = max(self.splitter.height(), 1)
        share = WAVEFORM_SHARE if self._window_height >= 700 else SMALL_SHARE
        top = max(self.splitter.widget(0).minimumHeight(), int(height * share)) if shown else 0
        self.splitter.setSizes([top, height - top])
        self.toggle.setChecked(shown)

    def _on_moved(self, *_: object) -> None:
        self.moved = True
        self.toggle.setChecked(self.splitter.sizes()[0] > 0)
