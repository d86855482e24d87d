"""The speaker panel: every speaker with colour, name and talk time; rename, recolour, merge, add.

The list mirrors the model's speaker book. Editing a name in place (double click or F2) renames;
"Colour…" picks a colour; "Merge…" folds the selected speakers into one; "Add" creates a speaker
for utterances the engine left unassigned. Every change goes through `app.commands`, so it is
undoable and shows everywhere at once (transcript chips, waveform lanes, exports). A refused edit
is reported through `message`.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QColorDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app import commands
from app import speakers as sp
from app.timeline import format_time
from app.transcript_model import TranscriptModel

IdRole = Qt.ItemDataRole.UserRole + 1
TalkRole = Qt.ItemDataRole.UserRole + 2


class TalkTimeDelegate(QStyledItemDelegate):
    """Paints each speaker's talk time, right-aligned in grey, after the name."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        super().paint(painter, option, index)
        talk = index.data(TalkRole)
        if talk:
            painter.save()
            painter.setPen(QColor("#7B8794"))
            painter.drawText(
                option.rect.adjusted(0, 0, -8, 0),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                talk,
            )
            painter.restore()


def swatch(color: str, size: int = 14) -> QIcon:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(color))
    painter.drawEllipse(1, 1, size - 2, size - 2)
    painter.end()
    return QIcon(pixmap)


class SpeakerPanel(QWidget):
    message = Signal(str)

    def __init__(self, model: TranscriptModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.title = QLabel("Speakers")
        self.title.setObjectName("panelTitle")
        self.list = QListWidget()
        self.list.setAccessibleName("Speakers")
        self.list.setAccessibleDescription("Speakers with their talk time. F2 renames the selected one.")
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed)  # fmt: skip
        self.list.setIconSize(QSize(14, 14))
        self.list.setItemDelegate(TalkTimeDelegate(self.list))
        self.add_button = self._button("Add", "Add a speaker", self.add)
        self.color_button = self._button("Colour…", "Change the selected speaker's colour", self.choose_color)
        self.merge_button = self._button("Merge…", "Merge the selected speakers into one", self.choose_merge)
        buttons = QHBoxLayout()
        for b in (self.add_button, self.color_button, self.merge_button):
            buttons.addWidget(b)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        self.list.itemChanged.connect(self._on_item_changed)
        model.document_changed.connect(self.refresh)
        self.refresh()

    def _button(self, text: str, tip: str, slot: object) -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        button.clicked.connect(slot)
        return button

    def refresh(self) -> None:
        selected = set(self.selected_ids())
        totals = sp.talk_time(self.model.utterances)
        turns: dict[str | None, int] = {}
        for u in self.model.utterances:
            turns[u.speaker] = turns.get(u.speaker, 0) + 1
        self.list.blockSignals(True)
        self.list.clear()
        for info in self.model.book:
            self._add_item(info.id, info.name, info.color, totals.get(info.id, 0.0), turns.get(info.id, 0))
            if info.id in selected:
                self.list.item(self.list.count() - 1).setSelected(True)
        if None in totals:
            self._add_item(None, sp.UNASSIGNED_NAME, sp.UNASSIGNED_COLOR, totals[None], turns[None])
        self.list.blockSignals(False)
        has = bool(self.model.book)
        self.color_button.setEnabled(has)
        self.merge_button.setEnabled(len(self.model.book) > 1)

    def _add_item(self, sid: str | None, name: str, color: str, seconds: float, count: int) -> None:
        item = QListWidgetItem(swatch(color), name)
        item.setData(IdRole, sid)
        item.setToolTip(f"{name}: {format_time(seconds, 0)} in {count} utterance(s)")
        item.setData(TalkRole, f"{format_time(seconds, 0)} · {count}")
        item.setData(Qt.ItemDataRole.AccessibleTextRole, item.toolTip())
        if sid is not None:
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        self.list.addItem(item)

    def selected_ids(self) -> list[str]:
        return [i.data(IdRole) for i in self.list.selectedItems() if i.data(IdRole) is not None]

    def item_for(self, speaker_id: str) -> QListWidgetItem | None:
        for row in range(self.list.count()):
            if self.list.item(row).data(IdRole) == speaker_id:
                return self.list.item(row)
        return None

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        sid = item.data(IdRole)
        if sid is None or item.text() == sp.display_name(self.model.book, sid):
            return
        try:
            commands.rename_speaker(self.model, sid, item.text())
        except ValueError as exc:
            self.message.emit(str(exc))
            self.refresh()

    def add(self) -> None:
        info = commands.add_speaker(self.model)
        item = self.item_for(info.id)
        if item is not None:
            self.list.setCurrentItem(item)
        self.message.emit(
            f"Added {info.name}; assign it with the Speaker column or Ctrl+{len(self.model.book)}"
        )

    def choose_color(self) -> None:
        ids = self.selected_ids()
        if not ids:
            self.message.emit("Select a speaker first")
            return
        current = QColor(sp.display_color(self.model.book, ids[0]))
        color = QColorDialog.getColor(current, self, "Speaker colour")
        if color.isValid():
            commands.recolor_speaker(self.model, ids[0], color.name())

    def choose_merge(self) -> None:
        ids = self.selected_ids() or [s.id for s in self.model.book[:1]]
        if len(ids) >= 2:
            names = [sp.display_name(self.model.book, i) for i in ids]
            name, ok = QInputDialog.getItem(self, "Merge speakers", "Keep the name:", names, 0, False)
            if ok:
                commands.merge_speakers(self.model, ids, ids[names.index(name)])
            return
        others = [s for s in self.model.book if s.id not in ids]
        if not ids or not others:
            return
        names = [s.name for s in others]
        source = sp.display_name(self.model.book, ids[0])
        name, ok = QInputDialog.getItem(self, "Merge speakers", f"Merge {source} into:", names, 0, False)
        if ok:
            commands.merge_speakers(self.model, ids, others[names.index(name)].id)
