"""The in-place editor of a transcript line's text (`LineTextEdit`).

A word-wrapped `QPlainTextEdit`: Enter commits (`commit`), Shift+Enter is a new line, Tab and
Shift+Tab ask to move to the next or previous line (`move`). It sits inside the transcript
table's viewport, so a viewport that let the table show through would make each key typed repaint
the table's cells beneath it as well as the editor (Qt paints what lies behind a see-through
widget first). The editor's viewport is opaque instead: it fills the part of itself that is to be
painted with its own background, then draws the text, and the table beneath is left alone. The
editor's frame keeps its rounded, see-through corners; only the rectangle inside it is opaque.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QPainter, QPaintEvent, QTextOption
from PySide6.QtWidgets import QPlainTextEdit, QWidget


class LineTextEdit(QPlainTextEdit):
    """The in-place text editor: wraps words; Enter commits; Tab / Shift+Tab move between lines."""

    commit = Signal()
    move = Signal(int)  # +1 next line, -1 previous line

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setTabChangesFocus(False)
        self.setFrameShape(QPlainTextEdit.Shape.NoFrame)
        self.setAccessibleName("Edit text")
        self.viewport().setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self.filled: str | None = None  # the text the delegate put in (None: not yet)

    def paintEvent(self, event: QPaintEvent) -> None:
        # an opaque viewport gets no background from Qt: it is filled here, in the colour Qt
        # (or the style sheet) would have used
        viewport = self.viewport()
        painter = QPainter(viewport)
        painter.fillRect(event.rect(), viewport.palette().brush(viewport.backgroundRole()))
        painter.end()
        super().paintEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, mods = event.key(), event.modifiers()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not mods & Qt.KeyboardModifier.ShiftModifier:
            self.commit.emit()
        elif key == Qt.Key.Key_Tab:
            self.move.emit(+1)
        elif key == Qt.Key.Key_Backtab:
            self.move.emit(-1)
        else:
            super().keyPressEvent(event)

    def text(self) -> str:
        return self.toPlainText()

    def cursorPosition(self) -> int:
        return self.textCursor().position()

    def setCursorPosition(self, position: int) -> None:
        cursor = self.textCursor()
        cursor.setPosition(min(max(position, 0), len(self.toPlainText())))
        self.setTextCursor(cursor)

    def focusNextPrevChild(self, _next: bool) -> bool:
        return False
