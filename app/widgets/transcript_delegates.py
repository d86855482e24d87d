"""How the transcript table draws and edits its cells.

- `RowDelegate` edits times in a line edit (cells are painted by Qt from the model's roles).
- `TextDelegate` edits an utterance's text in a word-wrapped, multi-line `LineTextEdit` with the
  caret where the user clicked (nothing is selected); Enter commits, Shift+Enter is a new line,
  Esc cancels, Tab commits and moves to the next line's text (Shift+Tab: the previous one).
- `SpeakerDelegate` paints a rounded chip in the speaker's colour whose text is black or white,
  whichever contrasts more (WCAG, `app.speakers.chip_text_color`); it edits with a combo box.
- `text_height(metrics, text, width)` is the height a wrapped text needs: the view sizes rows
  with it, one row at a time, so an edit never relays out the whole table.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QRectF,
    QSize,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFontMetrics,
    QPainter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QLineEdit,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from app import speakers as sp
from app.transcript_model import ColorRole, TranscriptModel
from app.widgets.line_text_edit import LineTextEdit

PAD_X, PAD_Y = 12, 10  # horizontal and vertical room around a cell's text
WRAP = Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignLeft  # once: enum "|" is slow per row
Index = QModelIndex | QPersistentModelIndex
MATCH, CURRENT_MATCH = "#FFE066", "#FF9F43"  # marks of find matches (black text: ≥ 9:1)


def text_height(metrics: QFontMetrics, text: str, width: int) -> int:
    """Pixels a cell needs to show `text` wrapped at `width` (at least one line)."""
    rect = metrics.boundingRect(QRect(0, 0, max(width - PAD_X, 20), 1_000_000), WRAP, text or " ")
    return max(rect.height(), metrics.height()) + PAD_Y + 4


class RowDelegate(QStyledItemDelegate):
    """Edits times in a line edit. (Alignment, the time columns' grey and the tint of the line
    being heard come from the model's roles, so cells paint without Python per cell.)"""

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        return QSize(60, option.fontMetrics.height() + PAD_Y + 4)

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: Index) -> QWidget:
        editor = QLineEdit(parent)
        editor.setAccessibleName("Edit time")
        return editor


class TextDelegate(RowDelegate):
    """Multi-line, word-wrapped editing with the caret where the click landed. While a search
    is on (`find`), every match in a painted line is drawn on a yellow mark, the current one
    on orange (both with black text, whatever the theme)."""

    editing = Signal(object)  # the open LineTextEdit, or None when it closed
    move_requested = Signal(int)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.editor: LineTextEdit | None = None
        self.editor_row: int | None = None  # a row of the view's (proxy) model
        self.pattern: re.Pattern[str] | None = None
        self.current: tuple[int, int] | None = None  # (source row, character offset) of the current match

    def find(self, pattern: re.Pattern[str] | None, current: tuple[int, int] | None) -> None:
        self.pattern, self.current = pattern, current

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        if self.pattern is None:  # no search: the cell as Qt paints it, its text not asked for twice
            super().paint(painter, option, index)
            return
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        matches = list(self.pattern.finditer(text)) if text else []
        if not matches:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        row = _source_row(index)
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(opt.font)
        doc.setTextWidth(max(opt.rect.width() - PAD_X, 20))
        doc.setPlainText(text)
        cursor = QTextCursor(doc)
        whole = QTextCharFormat()
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        whole.setForeground(opt.palette.highlightedText() if selected else opt.palette.text())
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.mergeCharFormat(whole)
        for m in matches:
            mark = QTextCharFormat()
            mark.setBackground(QColor(CURRENT_MATCH if (row, m.start()) == self.current else MATCH))
            mark.setForeground(QColor("#000000"))
            cursor.setPosition(m.start())
            cursor.setPosition(m.end(), QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(mark)
        painter.save()
        painter.translate(opt.rect.x() + PAD_X // 2 - 2, opt.rect.y() + PAD_Y // 2)
        painter.setClipRect(QRectF(0, 0, opt.rect.width(), opt.rect.height()))
        doc.drawContents(painter)
        painter.restore()

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: Index) -> QWidget:
        editor = LineTextEdit(parent)
        editor.commit.connect(lambda: self._close(editor, QStyledItemDelegate.EndEditHint.SubmitModelCache))
        editor.move.connect(lambda step: self._move(editor, step))
        self.editor, self.editor_row = editor, index.row()
        editor.destroyed.connect(lambda: self._forget(editor))
        self.editing.emit(editor)
        return editor

    def setEditorData(self, editor: QWidget, index: Index) -> None:
        """Fill a fresh editor; an editor the user has typed in, or one already showing the
        model's text, is left alone (a repaint of the line, e.g. playback tinting it, must not
        reset what is being typed nor move the caret)."""
        if not isinstance(editor, LineTextEdit):
            return
        text = str(index.data(Qt.ItemDataRole.EditRole) or "")
        if editor.filled is not None and (editor.toPlainText() != editor.filled or text == editor.filled):
            return  # the user has typed, or the editor already shows this text
        editor.filled = text
        quiet = editor.blockSignals(True)  # the caret is told once, at the end, not at the start too
        editor.setPlainText(text)  # (each report seeks the playback and redraws the word view)
        editor.blockSignals(quiet)
        editor.moveCursor(QTextCursor.MoveOperation.End)

    def place_caret(self, editor: LineTextEdit, viewport_point: QPoint | None) -> None:
        """Caret at the click (a point of the view's viewport), or at the end of the text."""
        if viewport_point is None:
            editor.moveCursor(QTextCursor.MoveOperation.End)
            return
        local = editor.viewport().mapFrom(editor, viewport_point - editor.pos())
        editor.setTextCursor(editor.cursorForPosition(local))

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: Index) -> None:
        if isinstance(editor, LineTextEdit):
            text = " ".join(editor.toPlainText().split())
            if text != index.data(Qt.ItemDataRole.EditRole):
                model.setData(index, text, Qt.ItemDataRole.EditRole)

    def updateEditorGeometry(self, editor: QWidget, option: QStyleOptionViewItem, index: Index) -> None:
        rect = option.rect
        lines = option.fontMetrics.height() * 2 + PAD_Y
        editor.setGeometry(rect.x(), rect.y(), rect.width(), max(rect.height(), lines))

    def _close(self, editor: QWidget, hint: QStyledItemDelegate.EndEditHint) -> None:
        self.commitData.emit(editor)
        self.closeEditor.emit(editor, hint)

    def _move(self, editor: QWidget, step: int) -> None:
        self._close(editor, QStyledItemDelegate.EndEditHint.NoHint)
        self.move_requested.emit(step)

    def _forget(self, editor: LineTextEdit) -> None:
        """An editor is gone; its deletion may come after the next one opened (Return, then F2 at
        once): only the open one's counts, or a finished run would drop the open line's text."""
        if editor is self.editor:
            self.editor, self.editor_row = None, None
            self.editing.emit(None)


class SpeakerDelegate(RowDelegate):
    """Paints a rounded chip in the speaker's colour; edits with a combo box of speakers."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._inks: dict[str, QColor] = {}

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        # the cell's background is filled here, not by the style: through a style sheet the
        # style's item drawing costs about a millisecond per cell
        cell = option.rect
        background = index.data(Qt.ItemDataRole.BackgroundRole)
        if option.state & QStyle.StateFlag.State_Selected:
            painter.fillRect(cell, option.palette.highlight())
        elif background is not None:
            painter.fillRect(cell, background)
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        color = index.data(ColorRole) or QColor(sp.UNASSIGNED_COLOR)
        metrics = option.fontMetrics
        width = min(metrics.horizontalAdvance(text) + 16, cell.width() - 8)
        height = min(metrics.height() + 4, cell.height() - 6)
        rect = QRectF(cell.x() + 4, cell.y() + 4, width, height)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2)
        painter.setPen(self._ink(color.name()))
        elided = metrics.elidedText(text, Qt.TextElideMode.ElideRight, int(rect.width()) - 12)
        painter.drawText(rect.adjusted(8, 0, -4, 0), Qt.AlignmentFlag.AlignVCenter, elided)
        painter.restore()

    def _ink(self, background: str) -> QColor:
        """Black or white for a chip colour (remembered per colour: painted for every row)."""
        if background not in self._inks:
            self._inks[background] = QColor(sp.chip_text_color(background))
        return self._inks[background]

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: Index) -> QWidget:
        combo = QComboBox(parent)
        combo.setAccessibleName("Speaker")
        model = source_model(index)
        combo.addItem(sp.UNASSIGNED_NAME, None)
        for info in model.book:
            combo.addItem(info.name, info.id)
        return combo

    def setEditorData(self, editor: QWidget, index: Index) -> None:
        if isinstance(editor, QComboBox):
            editor.setCurrentIndex(max(editor.findData(index.data(Qt.ItemDataRole.EditRole)), 0))

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: Index) -> None:
        if isinstance(editor, QComboBox):
            model.setData(index, editor.currentData(), Qt.ItemDataRole.EditRole)


def _source_row(index: Index) -> int:
    model = index.model()
    while isinstance(model, QSortFilterProxyModel):
        index = model.mapToSource(index)
        model = model.sourceModel()
    return index.row()


def source_model(index: Index) -> TranscriptModel:
    model = index.model()
    while isinstance(model, QSortFilterProxyModel):
        model = model.sourceModel()
    if not isinstance(model, TranscriptModel):
        raise TypeError("the transcript view shows a TranscriptModel")
    return model
