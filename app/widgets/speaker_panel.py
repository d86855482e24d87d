"""The speaker panel: every speaker with colour, name and talk time; rename, recolour, merge, add.

The list mirrors the model's speaker book. Editing a name in place (double click or F2) renames;
"Colour…" picks a colour; "Merge…" folds the selected speakers into one; "Add" creates a speaker
for utterances the engine left unassigned. Every change goes through `app.commands`, so it is
undoable and shows everywhere at once (transcript chips, waveform lanes, exports). A refused edit
is reported through `message`. Items are kept per speaker and updated in place: a change of the
book renames, recolours, adds or removes items; a change of turns updates only the talk times of
the speakers it names (`TranscriptModel.turns_changed`), never the whole list. A right-click on a
speaker, or the context-menu key / Shift+F10 on the current one, asks for that speaker's menu
(`menu_requested`), the one the transcript's speaker cells open too (`app.widgets.speaker_menu`);
a name recognised from the known voices gives its similarity in the tooltip.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, QPoint, QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QKeyEvent, QPainter, QPixmap
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
from app.known_voices import recognised_text
from app.timeline import format_time
from app.transcript_model import TranscriptModel
from app.widgets.speaker_menu import is_menu_key

IdRole = Qt.ItemDataRole.UserRole + 1
TalkRole = Qt.ItemDataRole.UserRole + 2
ColorRole = Qt.ItemDataRole.UserRole + 3


class TalkTimeDelegate(QStyledItemDelegate):
    """Paints each speaker's talk time, right-aligned in muted ink (≥ 4.5:1), after the name."""

    ink = QColor("#5B6670")  # replaced per instance by the window's theme

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        super().paint(painter, option, index)
        talk = index.data(TalkRole)
        if talk:
            painter.save()
            painter.setPen(self.ink)
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
    menu_requested = Signal(str, QPoint)  # a speaker id, where its menu goes (global coordinates)

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
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._show_menu)
        self.list.installEventFilter(self)  # the context-menu key and Shift+F10
        model.speakers_changed.connect(self.refresh)
        model.turns_changed.connect(self._on_turns)
        self.refresh()

    def _button(self, text: str, tip: str, slot: object) -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        button.clicked.connect(slot)
        return button

    def refresh(self) -> None:
        """Items for the book's speakers (then Unassigned, when some lines have no speaker)."""
        stats = self.model.stats()
        wanted: list[tuple[str | None, str, str]] = [(s.id, s.name, s.color) for s in self.model.book]
        if None in stats:
            wanted.append((None, sp.UNASSIGNED_NAME, sp.UNASSIGNED_COLOR))
        self.list.blockSignals(True)
        for row in range(self.list.count() - 1, -1, -1):
            if self.list.item(row).data(IdRole) not in {w[0] for w in wanted}:
                self.list.takeItem(row)
        for position, (sid, name, color) in enumerate(wanted):
            item = self.item_for(sid)
            if item is None:
                item = QListWidgetItem()
                item.setData(IdRole, sid)
                if sid is not None:
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                self.list.insertItem(position, item)
            elif self.list.row(item) != position:
                selected = item.isSelected()
                self.list.insertItem(position, self.list.takeItem(self.list.row(item)))
                item.setSelected(selected)
            if item.text() != name:
                item.setText(name)
            if item.data(ColorRole) != color:
                item.setData(ColorRole, color)
                item.setIcon(swatch(color))
            self._show_stats(item, stats.get(sid, (0.0, 0)))
        self.list.blockSignals(False)
        self.color_button.setEnabled(bool(self.model.book))
        self.merge_button.setEnabled(len(self.model.book) > 1)

    def _on_turns(self, ids: frozenset[str | None] | None) -> None:
        stats = self.model.stats()
        if ids is None or (None in stats) != (self.item_for(None) is not None):
            self.refresh()
            return
        for sid in ids:
            item = self.item_for(sid)
            if item is not None:
                self._show_stats(item, stats.get(sid, (0.0, 0)))

    def _show_stats(self, item: QListWidgetItem, stats: tuple[float, int]) -> None:
        seconds, count = stats
        name = item.text()
        info = sp.find(self.model.book, item.data(IdRole))
        score = info.score if info is not None else None
        known = f"\n{recognised_text(name, score)}" if score is not None else ""
        item.setToolTip(f"{name}: {format_time(seconds, 0)} in {count} utterance(s){known}")
        item.setData(TalkRole, f"{format_time(seconds, 0)} · {count}")
        item.setData(Qt.ItemDataRole.AccessibleTextRole, item.toolTip())

    def _show_menu(self, at: QPoint) -> None:
        item = self.list.itemAt(at)
        sid = item.data(IdRole) if item is not None else None
        if sid is not None:
            self.menu_requested.emit(sid, self.list.viewport().mapToGlobal(at))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.list and isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress:
            item = self.list.currentItem()
            if is_menu_key(event) and item is not None:
                self._show_menu(self.list.visualItemRect(item).center())
                return True
        return super().eventFilter(watched, event)

    def selected_ids(self) -> list[str]:
        return [i.data(IdRole) for i in self.list.selectedItems() if i.data(IdRole) is not None]

    def item_for(self, speaker_id: str | None) -> QListWidgetItem | None:
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
        if item is not None:  # only the new speaker is selected, so the next Merge… takes just it
            self.list.setCurrentItem(item, QItemSelectionModel.SelectionFlag.ClearAndSelect)
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
