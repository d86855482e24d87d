"""The keyboard help on its own: one row per command key and per key that is not a command,
searched by typing, read-only, sized to the screen, closed by its button."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractItemView, QDialog, QDialogButtonBox

from app.actions import shortcut_table
from app.widgets.shortcuts_dialog import EXTRA_KEYS, ShortcutsDialog


@pytest.fixture
def dialog(qapp):
    shown = ShortcutsDialog()
    shown.show()
    yield shown
    shown.close()
    shown.deleteLater()


def test_every_command_key_and_every_other_key_is_a_row_under_its_area(dialog):
    rows = dialog.visible_rows()
    assert rows == [*shortcut_table(), *EXTRA_KEYS]
    assert len(rows) > len(EXTRA_KEYS)
    header = [dialog.table.horizontalHeaderItem(c).text() for c in range(3)]
    assert header == ["Area", "Command", "Keys"]


def test_typing_keeps_the_rows_whose_area_command_or_key_holds_the_text_in_any_case(dialog):
    QTest.keyClicks(dialog.search, "  SHIFT+ENTER ")
    assert dialog.visible_rows() == [("Line editor", "New line inside the text", "Shift+Enter")]
    dialog.search.clear()
    QTest.keyClicks(dialog.search, "speakers")  # an area (and words in a few commands)
    shown = dialog.visible_rows()
    assert all("speakers" in " ".join(row).lower() for row in shown)
    assert [row for row in EXTRA_KEYS if row[0] == "Speakers"] == [row for row in shown if row in EXTRA_KEYS]
    dialog.search.clear()
    QTest.keyClicks(dialog.search, "rename the selected")  # a command
    assert [command for _, command, _ in dialog.visible_rows()] == ["Rename the selected speaker"]
    dialog.search.clear()
    QTest.keyClicks(dialog.search, "no such key")
    assert dialog.visible_rows() == []
    dialog.search.clear()
    assert len(dialog.visible_rows()) == dialog.table.rowCount()


def test_the_rows_cannot_be_edited(dialog):
    assert dialog.table.editTriggers() == QAbstractItemView.EditTrigger.NoEditTriggers
    dialog.table.setCurrentCell(0, 1)
    QTest.keyClick(dialog.table, Qt.Key.Key_F2)
    assert dialog.table.state() != QAbstractItemView.State.EditingState


def test_it_fits_the_screen_it_opens_on(dialog):
    area = QGuiApplication.primaryScreen().availableGeometry()
    assert dialog.width() == min(640, int(area.width() * 0.9))
    assert dialog.height() == min(560, int(area.height() * 0.8))


def test_close_dismisses_it(dialog):
    closed = []
    dialog.finished.connect(closed.append)
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Close).click()
    assert closed == [QDialog.DialogCode.Rejected.value] and not dialog.isVisible()
