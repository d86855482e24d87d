"""Find and replace across the transcript, and the speaker filter, in a bar above the table.

The find row (find field, case, whole words, regular expression, previous/next, count, speaker
filter) is always there; a pattern that does not compile says why in place of the count; the replace
row appears with Ctrl+H or the "Replace" toggle, so neither row crushes its fields at the
window's smallest size (each field keeps a minimum width).

Typing a query marks every match in the table and counts them; Next / Previous walk the
matches in reading order, select the matching row and mark the current match apart; Replace changes
the current match and moves on; Replace all changes every match as one undoable step. The
"Show" box filters the table to one speaker (or the unassigned utterances).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app import commands
from app import speakers as sp
from app.edits import Match, find_matches, search_pattern
from app.transcript_model import TranscriptModel
from app.widgets.transcript_view import ALL, TranscriptView


class FindBar(QWidget):
    message = Signal(str)

    def __init__(self, model: TranscriptModel, view: TranscriptView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model, self.view = model, view
        self.current: Match | None = None
        self.find_edit = self._edit("Find", "Find text in the transcript")
        self.replace_edit = self._edit("Replace with", "Replacement text")
        self.case = QCheckBox("Aa")
        self.case.setToolTip("Match case")
        self.case.setAccessibleName("Match case")
        self.whole = QCheckBox("W")
        self.whole.setToolTip("Whole words only")
        self.whole.setAccessibleName("Whole words")
        self.regex = QCheckBox(".*")
        self.regex.setToolTip("Regular expression (the replacement may use \\1, \\g<name>)")
        self.regex.setAccessibleName("Regular expression")
        self.count = QLabel("")
        self.count.setMinimumWidth(64)
        self.speaker_filter = QComboBox()
        self.speaker_filter.setAccessibleName("Show speaker")
        self.speaker_filter.setToolTip("Show the utterances of one speaker only")
        self.find_edit.setMinimumWidth(140)
        self.replace_edit.setMinimumWidth(140)
        self.speaker_filter.setMinimumWidth(110)
        self.toggle = QToolButton()
        self.toggle.setText("Replace")
        self.toggle.setCheckable(True)
        self.toggle.setToolTip("Show the replace field (Ctrl+H)")
        self.toggle.setAccessibleName("Show replace")
        find_row = QHBoxLayout()
        find_row.addWidget(self.find_edit, 2)
        for box in (self.case, self.whole, self.regex):
            find_row.addWidget(box)
        for text, tip, slot in (("◀", "Previous match (Shift+F3)", self.find_previous),
                                ("▶", "Next match (F3)", self.find_next)):  # fmt: skip
            find_row.addWidget(self._button(text, tip, slot))
        find_row.addWidget(self.count)
        find_row.addWidget(self.toggle)
        find_row.addSpacing(8)
        find_row.addWidget(QLabel("Show"))
        find_row.addWidget(self.speaker_filter, 1)
        self.replace_row = QWidget()
        replace_row = QHBoxLayout(self.replace_row)
        replace_row.setContentsMargins(0, 0, 0, 0)
        replace_row.addWidget(self.replace_edit, 2)
        replace_row.addWidget(self._button("Replace", "Replace this match", self.replace_one))
        replace_row.addWidget(self._button("All", "Replace every match (one undo step)", self.replace_every))
        replace_row.addStretch(1)
        self.replace_row.hide()
        self.toggle.toggled.connect(self.replace_row.setVisible)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(find_row)
        layout.addWidget(self.replace_row)
        self.find_edit.returnPressed.connect(self.find_next)
        self.find_edit.textChanged.connect(lambda _text: self._reset())
        for box in (self.case, self.whole, self.regex):
            box.toggled.connect(lambda _on: self._reset())
        self.speaker_filter.currentIndexChanged.connect(lambda _index: self._apply_filter())
        model.speakers_changed.connect(self.refresh_speakers)
        self.refresh_speakers()

    def _edit(self, placeholder: str, name: str) -> QLineEdit:
        edit = QLineEdit()
        edit.setPlaceholderText(placeholder)
        edit.setAccessibleName(name)
        edit.setClearButtonEnabled(True)
        return edit

    def _button(self, text: str, tip: str, slot: Callable[[], None]) -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        button.clicked.connect(lambda _checked=False: slot())
        return button

    def show_replace(self) -> None:
        self.toggle.setChecked(True)
        self.replace_edit.setFocus()

    def refresh_speakers(self) -> None:
        chosen = self.speaker_filter.currentData() if self.speaker_filter.count() else ALL
        self.speaker_filter.blockSignals(True)
        self.speaker_filter.clear()
        self.speaker_filter.addItem("All speakers", ALL)
        for info in self.model.book:
            self.speaker_filter.addItem(info.name, info.id)
        self.speaker_filter.addItem(sp.UNASSIGNED_NAME, None)
        found = self.speaker_filter.findData(chosen)
        self.speaker_filter.setCurrentIndex(max(found, 0))
        self.speaker_filter.blockSignals(False)
        self._apply_filter()

    def set_speaker_filter(self, speaker: str | None) -> None:
        self.speaker_filter.setCurrentIndex(max(self.speaker_filter.findData(speaker), 0))

    def _apply_filter(self) -> None:
        self.view.filter.set_speaker(self.speaker_filter.currentData())

    def _options(self) -> tuple[bool, bool, bool]:
        return self.case.isChecked(), self.regex.isChecked(), self.whole.isChecked()

    def _pattern(self) -> re.Pattern[str] | None:
        """The search as compiled, or None (no query, or one that does not compile)."""
        try:
            return search_pattern(self.find_edit.text(), *self._options())
        except ValueError:
            return None

    def _matches(self) -> list[Match]:
        """Every match, or none; a query that cannot search says why in the count."""
        query = self.find_edit.text()
        if not query:
            return []
        try:
            return find_matches([u.text for u in self.model.utterances], query, *self._options())
        except ValueError as exc:
            self.count.setText(str(exc))
            return []

    def _reset(self) -> None:
        self.current = None
        self.count.setText("")
        matches = self._matches()
        if self.find_edit.text() and not self.count.text():
            self.count.setText(f"{len(matches)} found")
        self._highlight()

    def _highlight(self) -> None:
        """Every match marked in the table, the current one apart."""
        current = (self.current.row, self.current.start) if self.current else None
        self.view.row_delegate.find(self._pattern(), current)
        self.view.viewport().update()

    def find_next(self) -> None:
        self._step(+1)

    def find_previous(self) -> None:
        self._step(-1)

    def _step(self, direction: int) -> None:
        self.count.setText("")
        matches = self._matches()
        if not matches:
            self.current = None
            if not self.count.text():
                self.count.setText("0 found" if self.find_edit.text() else "")
            return
        keys = [(m.row, m.start) for m in matches]
        here = (self.current.row, self.current.start) if self.current else None
        if here is None:
            row = self.view.current_source_row()
            i = next((k for k, key in enumerate(keys) if row is not None and key[0] >= row), 0)
        elif direction > 0:
            i = next((k for k, key in enumerate(keys) if key > here), 0)
        else:
            i = next((k for k in range(len(keys) - 1, -1, -1) if keys[k] < here), len(keys) - 1)
        self.current = matches[i]
        self.count.setText(f"{i + 1} of {len(matches)}")
        self.view.select_row(self.current.row)
        self._highlight()

    def replace_one(self) -> None:
        if self.current is None or self.current not in self._matches():
            self.find_next()
            return
        try:
            commands.replace_match(
                self.model,
                self.current,
                self.replace_edit.text(),
                self._pattern() if self.regex.isChecked() else None,
            )
        except ValueError as exc:
            self.message.emit(str(exc))
            return
        self.current = Match(self.current.row, self.current.start, self.current.start)
        self.find_next()

    def replace_every(self) -> None:
        if not self.find_edit.text():
            return
        try:
            query, replacement = self.find_edit.text(), self.replace_edit.text()
            n = commands.replace_all(self.model, query, replacement, *self._options())
        except ValueError as exc:
            self.message.emit(str(exc))
            return
        self.message.emit(f"Replaced {n} occurrence(s)")
        self._reset()
