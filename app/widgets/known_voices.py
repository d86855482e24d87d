"""The Known Voices window: the people Murmur knows by voice, each with how many samples it holds
and when it was added; rename, merge two, delete (with their embeddings), play a sample.

A thin view over `app.known_voices` and the library: every change is made in the library at once
and the list read again from it; a refused change (a taken name, another embedding model, a
locked file) is shown in the window's status line, the library left as it was. "Play sample"
asks `play(name)` to play that person's first sample (the window plays it from whichever
recording it came, `app.sample_player`) and shows what it answers.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.known_voices import rows
from engine.voices import VoiceLibrary, VoiceLibraryError

NameRole = Qt.ItemDataRole.UserRole + 1


class KnownVoicesDialog(QDialog):
    def __init__(
        self, library: VoiceLibrary, play: Callable[[str], str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.library, self.play = library, play
        self.setWindowTitle("Known Voices")
        self.list = QListWidget()
        self.list.setAccessibleName("Known voices")
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.rename_button = self._button("Rename…", self.rename)
        self.merge_button = self._button("Merge…", self.merge)
        self.delete_button = self._button("Delete", self.delete)
        self.play_button = self._button("Play Sample", self.play_sample)
        buttons = QHBoxLayout()
        for b in (self.rename_button, self.merge_button, self.delete_button, self.play_button):
            buttons.addWidget(b)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"Voice library: {library.path}"))
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout.addWidget(close)
        self.list.currentItemChanged.connect(lambda *_: self._update_buttons())
        self.refresh()

    def _button(self, text: str, slot: Callable[[], None]) -> QPushButton:
        button = QPushButton(text)
        button.clicked.connect(slot)
        return button

    def refresh(self) -> None:
        try:
            people = rows(self.library)
        except VoiceLibraryError as exc:
            people = []
            self.status.setText(str(exc))
        self.list.clear()
        for row in people:
            item = QListWidgetItem(row.text)
            item.setData(NameRole, row.name)
            self.list.addItem(item)
        if not people and not self.status.text():
            self.status.setText("No known voices yet: right-click a speaker and choose Remember This Voice…")
        if self.list.count():
            self.list.setCurrentRow(0)
        self._update_buttons()

    def selected(self) -> str | None:
        item = self.list.currentItem()
        return item.data(NameRole) if item is not None else None

    def _update_buttons(self) -> None:
        chosen = self.selected() is not None
        for b in (self.rename_button, self.delete_button, self.play_button):
            b.setEnabled(chosen)
        self.merge_button.setEnabled(chosen and self.list.count() > 1)

    def _change(self, change: Callable[[], None], done: str) -> None:
        try:
            change()
        except (ValueError, VoiceLibraryError) as exc:
            self.status.setText(str(exc))
            return
        self.status.setText(done)
        self.refresh()
        self.status.setText(done)

    def rename(self) -> None:
        old = self.selected()
        if old is None:
            return
        new, ok = QInputDialog.getText(self, "Rename voice", f"New name for {old}:", text=old)
        if ok and new.strip() and new.strip() != old:
            self._change(lambda: self.library.rename(old, new), f"Renamed {old} to {new.strip()}")

    def merge(self) -> None:
        source = self.selected()
        others = [self.list.item(i).data(NameRole) for i in range(self.list.count())]
        others = [n for n in others if n != source]
        if source is None or not others:
            return
        target, ok = QInputDialog.getItem(self, "Merge voices", f"Merge {source} into:", others, 0, False)
        if ok:
            self._change(lambda: self.library.merge(source, target), f"Merged {source} into {target}")

    def delete(self) -> None:
        name = self.selected()
        if name is None:
            return
        asked = QMessageBox.question(self, "Delete voice", f"Delete {name} and every sample of their voice?")
        if asked == QMessageBox.StandardButton.Yes:
            self._change(lambda: self.library.remove(name), f"Deleted {name}")

    def play_sample(self) -> None:
        name = self.selected()
        if name is not None:
            self.status.setText(self.play(name))
