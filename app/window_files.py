"""Pieces of the main window kept apart so that it holds wiring only: how its panes are arranged
(`compose`), which export files exist already and whether they may be replaced."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QScrollArea, QSplitter, QVBoxLayout, QWidget

from app.widgets.export_dialog import ExportRequest
from engine.types import Transcript


def existing_outputs(transcript: Transcript, request: ExportRequest) -> list[Path]:
    """The files an export would overwrite."""
    from engine.export import output_paths

    return [p for p in output_paths(transcript, request.target, list(request.formats)) if p.exists()]


def ask_overwrite(parent: QWidget, paths: list[Path]) -> bool:
    """True when the user agrees to replace `paths`."""
    names = "\n".join(f"  {p.name}" for p in paths[:8]) + ("\n  …" if len(paths) > 8 else "")
    answer = QMessageBox.question(
        parent, "Replace existing files?",
        f"These files already exist in {paths[0].parent}:\n{names}\n\nReplace them?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No,
    )  # fmt: skip
    return answer == QMessageBox.StandardButton.Yes


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
