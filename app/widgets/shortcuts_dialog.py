"""The keyboard help (F1): every key, searchable, in a dialog that fits the screen.

Rows come from the window's command table (`app.actions.shortcut_table`) plus the keys that are
not commands: those of the waveform, the line editor and the speaker list (`EXTRA_KEYS`).
Typing in the search box keeps the rows whose area, command or key contains the text.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.actions import shortcut_table

EXTRA_KEYS: tuple[tuple[str, str, str], ...] = (
    ("Waveform", "Zoom in / out", "+ / −, mouse wheel"),
    ("Waveform", "Pan", "← / →, drag"),
    ("Waveform", "Start / end of the recording", "Home / End"),
    ("Waveform", "Show everything", "0"),
    ("Waveform", "Move the playhead and select the line there", "Click"),
    ("Waveform", "Play from there", "Double click"),
    ("Waveform", "Mark a range to transcribe again", "Shift+drag"),
    ("Transcript", "Edit the selected line (caret at the end)", "F2, Enter"),
    ("Transcript", "Edit with the caret where you click", "Click the selected line"),
    ("Transcript", "Seek to a line / a word", "Click the line / move the caret onto the word"),
    ("Line editor", "Save the line", "Enter"),
    ("Line editor", "New line inside the text", "Shift+Enter"),
    ("Line editor", "Save and edit the next / previous line", "Tab / Shift+Tab"),
    ("Line editor", "Cancel the edit", "Esc"),
    (
        "Transcript",
        "The selected line's speaker menu (rename, remember the voice, Not <name>)",
        "Menu key, Shift+F10, right-click the speaker",
    ),
    ("Speakers", "Rename the selected speaker", "F2, double click"),
    ("Speakers", "The current speaker's menu", "Menu key, Shift+F10, right-click"),
    ("Words", "Seek to a word", "Click the word"),
)


class ShortcutsDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.setAccessibleName("Keyboard shortcuts")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search commands and keys")
        self.search.setAccessibleName("Search shortcuts")
        self.search.setClearButtonEnabled(True)
        rows = [*shortcut_table(), *EXTRA_KEYS]
        self.table = QTableWidget(len(rows), 3)
        self.table.setHorizontalHeaderLabels(["Area", "Command", "Keys"])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setAccessibleName("Shortcuts")
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.search.textChanged.connect(self.filter_rows)
        self._fit_screen(parent)

    def _fit_screen(self, parent: QWidget | None) -> None:
        screen = (parent.screen() if parent is not None else None) or QGuiApplication.primaryScreen()
        self.resize(fitted_size(screen.availableGeometry().size()))

    def filter_rows(self, text: str) -> None:
        needle = text.strip().lower()
        for r in range(self.table.rowCount()):
            cells = " ".join(self.table.item(r, c).text() for c in range(3)).lower()
            self.table.setRowHidden(r, bool(needle) and needle not in cells)

    def visible_rows(self) -> list[tuple[str, str, str]]:
        return [tuple(self.table.item(r, c).text() for c in range(3))  # type: ignore[misc]
                for r in range(self.table.rowCount()) if not self.table.isRowHidden(r)]  # fmt: skip


def fitted_size(area: QSize) -> QSize:
    """640 × 560, or less on a small screen: at most 90 % of its width and 80 % of its height."""
    return QSize(min(640, int(area.width() * 0.9)), min(560, int(area.height() * 0.8)))
