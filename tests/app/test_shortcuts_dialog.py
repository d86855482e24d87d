"""The keyboard help on its own: one row per command key and per key that is not a command,
searched by typing, read-only, sized to the screen, closed by its button."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView

from app.actions import shortcut_table
from app.widgets.shortcuts_dialog import EXTRA_KEYS, ShortcutsDialog, fitted_size


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
    QTest.keyClicks(dialog.search, "waveform zoom")  # an area and its command together
    assert [command for _, command, _ in dialog.visible_rows()] == ["Zoom in / out"]
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
    area = QGuiApplication.primaryScreen().availableGeometry().size()
    assert dialog.size() == fitted_size(area)


@pytest.mark.parametrize(
    ("screen", "size"), [((1920, 1080), (640, 560)), ((1024, 600), (640, 480)), ((600, 400), (540, 320))]
)
def test_its_size_is_640_by_560_or_less_on_a_small_screen(screen, size):
    assert fitted_size(QSize(*screen)) == QSize(*size)


def test_it_is_named_for_screen_readers_and_its_command_column_takes_the_spare_width(dialog):
    assert dialog.windowTitle() == dialog.accessibleName() == "Keyboard shortcuts"
    assert dialog.table.accessibleName() == "Shortcuts" and dialog.table.columnCount() == 3
    search = dialog.search
    assert search.placeholderText() == "Search commands and keys"
    assert search.accessibleName() == "Search shortcuts"
    assert search.isClearButtonEnabled()
    header, mode = dialog.table.horizontalHeader(), QHeaderView.ResizeMode
    modes = [header.sectionResizeMode(c) for c in range(3)]
    assert modes == [mode.ResizeToContents, mode.Stretch, mode.ResizeToContents]


def test_close_dismisses_it(dialog):
    closed = []
    dialog.finished.connect(closed.append)
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Close).click()
    assert closed == [QDialog.DialogCode.Rejected.value] and not dialog.isVisible()
