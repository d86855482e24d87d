"""How the main window's panes are arranged: the waveform above, in a vertical splitter, the
transcript column beside a scrolling column of speakers and playback below it."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QScrollArea, QSplitter, QVBoxLayout, QWidget


def compose(top: QWidget, main: Sequence[QWidget], side: Sequence[QWidget]) -> QSplitter:
    """`top` above, in a vertical splitter; below it the `main` column (its third widget takes
    the spare height) beside a scrolling `side` column."""
    left = QWidget()
    column = QVBoxLayout(left)
    column.setContentsMargins(8, 6, 4, 8)
    for i, widget in enumerate(main):
        column.addWidget(widget, 1 if i == 2 else 0)
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
    splitter.setChildrenCollapsible(False)
    return splitter
