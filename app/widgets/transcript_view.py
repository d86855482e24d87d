"""The transcript table: time, a speaker chip in the speaker's colour, and the editable text.

`TranscriptView` shows a `TranscriptModel` through `SpeakerFilter` (filter by speaker) and keeps
the view thin: it reports the selected source row (`row_selected`), selects and scrolls to a row
on request, and knows where the text cursor is while a line is being edited (for "split at the
cursor"). Speakers are chosen in the table with a combo box; the utterance playing now is tinted.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QRectF,
    QSize,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLineEdit,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from app import speakers as sp
from app.transcript_model import END, SPEAKER, START, TEXT, ColorRole, CurrentRole, TranscriptModel

ALL = "\x00all"  # the filter value that shows every speaker
CURRENT_TINT = QColor("#FFF1C2")
Index = QModelIndex | QPersistentModelIndex


class SpeakerFilter(QSortFilterProxyModel):
    """Rows of one speaker (an id, None for unassigned), or all rows with `ALL`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.speaker: str | None = ALL

    def set_speaker(self, speaker: str | None) -> None:
        self.beginFilterChange()
        self.speaker = speaker
        self.endFilterChange()

    def filterAcceptsRow(self, row: int, parent: Index) -> bool:
        if self.speaker == ALL:
            return True
        model = self.sourceModel()
        return model.utterance(row).speaker == self.speaker  # type: ignore[attr-defined]


class RowDelegate(QStyledItemDelegate):
    """Tints the row of the utterance playing now; the text editor remembers its cursor."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.editor: QLineEdit | None = None
        self.editor_row: int | None = None

    def initStyleOption(self, option: QStyleOptionViewItem, index: Index) -> None:
        super().initStyleOption(option, index)
        if index.data(CurrentRole):
            option.backgroundBrush = QBrush(CURRENT_TINT)
        if index.column() in (START, END):
            option.displayAlignment = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop
            option.palette.setColor(option.palette.ColorRole.Text, QColor("#5B6670"))
        else:
            option.displayAlignment = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        size = super().sizeHint(option, index)
        return QSize(size.width(), max(size.height() + 8, option.fontMetrics.height() + 14))

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: Index) -> QWidget:
        editor = QLineEdit(parent)
        editor.setAccessibleName("Edit " + ("text" if index.column() == TEXT else "time"))
        if index.column() == TEXT:
            self.editor, self.editor_row = editor, index.row()
            editor.destroyed.connect(self._forget)
        return editor

    def _forget(self) -> None:
        self.editor, self.editor_row = None, None


class SpeakerDelegate(RowDelegate):
    """Paints a rounded chip in the speaker's colour; edits with a combo box of speakers."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""
        style = opt.widget.style() if opt.widget else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        color = index.data(ColorRole) or QColor(sp.UNASSIGNED_COLOR)
        metrics = opt.fontMetrics
        width = min(metrics.horizontalAdvance(text) + 16, opt.rect.width() - 8)
        height = min(metrics.height() + 4, opt.rect.height() - 6)
        rect = QRectF(opt.rect.x() + 4, opt.rect.y() + 4, width, height)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2)
        painter.setPen(QColor("white") if color.lightness() < 170 else QColor("#1F2933"))
        elided = metrics.elidedText(text, Qt.TextElideMode.ElideRight, int(rect.width()) - 12)
        painter.drawText(rect.adjusted(8, 0, -4, 0), Qt.AlignmentFlag.AlignVCenter, elided)
        painter.restore()

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: Index) -> QWidget:
        combo = QComboBox(parent)
        combo.setAccessibleName("Speaker")
        model = _source(index)
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


def _source(index: Index) -> TranscriptModel:
    model = index.model()
    while isinstance(model, QSortFilterProxyModel):
        model = model.sourceModel()
    if not isinstance(model, TranscriptModel):
        raise TypeError("the transcript view shows a TranscriptModel")
    return model


class TranscriptView(QTableView):
    row_selected = Signal(int)  # a source row

    def __init__(self, model: TranscriptModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = model
        self.filter = SpeakerFilter(self)
        self.filter.setSourceModel(model)
        self.setModel(self.filter)
        self.row_delegate = RowDelegate(self)
        self.setItemDelegate(self.row_delegate)
        self.setItemDelegateForColumn(SPEAKER, SpeakerDelegate(self))
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        triggers = QAbstractItemView.EditTrigger
        self.setEditTriggers(triggers.DoubleClicked | triggers.EditKeyPressed | triggers.SelectedClicked)
        self.setWordWrap(True)
        self.setShowGrid(False)
        self.setAlternatingRowColors(True)
        self.verticalHeader().hide()
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header = self.horizontalHeader()
        header.setSectionResizeMode(TEXT, QHeaderView.ResizeMode.Stretch)
        for col, width in ((START, 78), (END, 78), (SPEAKER, 130)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            self.setColumnWidth(col, width)
        self.setAccessibleName("Transcript")
        self.setAccessibleDescription("One row per utterance: start, end, speaker and text. "
                                      "F2 edits, Enter commits, Escape cancels.")  # fmt: skip
        self.selectionModel().currentRowChanged.connect(self._on_current)

    def source_row(self, proxy_row: int) -> int:
        return self.filter.mapToSource(self.filter.index(proxy_row, 0)).row()

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
        flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect
                 | QItemSelectionModel.SelectionFlag.Rows)  # fmt: skip
        self.selectionModel().setCurrentIndex(index, flags)
        self.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)

    def edit_cursor(self) -> tuple[int, int] | None:
        """(source row, character position) of the text being edited, if any."""
        editor, row = self.row_delegate.editor, self.row_delegate.editor_row
        if editor is None or row is None:
            return None
        return self.filter.mapToSource(self.filter.index(row, TEXT)).row(), editor.cursorPosition()

    def commit_open_editor(self) -> None:
        """Write the text being typed (if any) into the model, closing the editor."""
        editor = self.row_delegate.editor
        if editor is not None:
            self.commitData(editor)
            self.closeEditor(editor, QStyledItemDelegate.EndEditHint.NoHint)

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.row_selected.emit(self.filter.mapToSource(current).row())
