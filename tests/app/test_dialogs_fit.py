"""Every dialog of the app on a small screen (1024×600, a netbook or a projector): its frame fits,
its rows scroll, and its buttons (OK, Cancel, Export, Close) stay where the user can press them.

The dialogs are found by reading app/: every class there that derives from QDialog (directly or
through another dialog of the app) must have a way to build it below, so a new dialog cannot be
left out. The Re-transcribe Selection dialog also names the range it runs on, and its spin arrows
step.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QSpinBox,
    QStyle,
    QStyleOptionSpinBox,
)

from app.resources import style_sheet
from app.settings import TranscribeSettings, setting_names
from app.widgets.export_dialog import ExportDialog
from app.widgets.known_voices import KnownVoicesDialog
from app.widgets.retranscribe_dialog import RetranscribeDialog
from app.widgets.settings_dialog import SettingsDialog
from app.widgets.shortcuts_dialog import ShortcutsDialog
from engine.voices import VoiceLibrary

APP = Path(__file__).resolve().parents[2] / "app"
SCREEN = QRect(0, 0, 1024, 600)
TITLE_BAR = 40
QT_DIALOGS = {"QDialog", "QMessageBox", "QInputDialog", "QFileDialog", "QProgressDialog"}

DIALOGS: dict[str, Callable[[Path], QDialog]] = {
    "SettingsDialog": lambda _: SettingsDialog(TranscribeSettings(backend="vibevoice")),  # the most rows
    "RetranscribeDialog": lambda _: RetranscribeDialog(
        TranscribeSettings(backend="vibevoice"), 83.4, 3723.95
    ),
    "ExportDialog": lambda folder: ExportDialog(folder, "meeting", {}),
    "ShortcutsDialog": lambda _: ShortcutsDialog(),
    "KnownVoicesDialog": lambda folder: KnownVoicesDialog(VoiceLibrary(folder / "voices.db"), lambda _: ""),
}


def dialog_classes() -> set[str]:
    """Names of the classes in app/ that derive from a Qt dialog, directly or through each other."""
    bases: dict[str, set[str]] = {}
    for path in APP.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                names = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                bases[node.name] = names
    dialogs: set[str] = set()
    while True:
        found = {name for name, b in bases.items() if b & (QT_DIALOGS | dialogs)} - dialogs
        if not found:
            return dialogs
        dialogs |= found


def test_every_dialog_of_the_app_is_checked_here():
    assert dialog_classes() == set(DIALOGS), "a dialog in app/ has no entry in DIALOGS"


def shown_on_the_small_screen(dialog: QDialog, qtbot) -> QDialog:
    """`dialog` shown at its wanted size, as far as a 1024×600 screen (less a title bar) allows."""
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    frame = dialog.frameGeometry().size() - dialog.size()  # the window's border
    room = SCREEN.size() - frame - QSize(0, TITLE_BAR)
    least = dialog.minimumSizeHint()
    assert least.width() <= room.width() and least.height() <= room.height(), f"no smaller than {least}"
    dialog.resize(dialog.sizeHint().expandedTo(dialog.size()).boundedTo(room))
    qtbot.wait(10)
    return dialog


@pytest.mark.parametrize("name", sorted(DIALOGS))
def test_the_dialog_fits_a_1024_by_600_screen_with_its_buttons_on_it(name, qtbot, qapp, tmp_path):
    old = qapp.styleSheet()
    qapp.setStyleSheet(style_sheet())  # the app's own padding and fonts
    try:
        dialog = shown_on_the_small_screen(DIALOGS[name](tmp_path), qtbot)
        frame = dialog.frameGeometry()
        assert frame.width() <= SCREEN.width() and frame.height() + TITLE_BAR <= SCREEN.height()
        [box] = dialog.findChildren(QDialogButtonBox)
        buttons = box.findChildren(QAbstractButton)
        assert buttons
        for button in buttons:
            corner = button.mapTo(dialog, QPoint(button.width() - 1, button.height() - 1))
            assert button.isVisible() and dialog.rect().contains(corner), f"{button.text()} is off the dialog"
    finally:
        qapp.setStyleSheet(old)


@pytest.mark.parametrize("name", ["SettingsDialog", "RetranscribeDialog"])
def test_the_settings_rows_scroll_to_the_last_one(name, qtbot, tmp_path):
    dialog = shown_on_the_small_screen(DIALOGS[name](tmp_path), qtbot)
    last = dialog.editors[setting_names()[-1]]
    dialog.scroll.ensureWidgetVisible(last)  # the last row can be scrolled to
    assert dialog.scroll.verticalScrollBar().value() > 0 and not last.visibleRegion().isEmpty()


def test_the_retranscribe_dialog_names_its_range_and_its_spin_arrows_step(qtbot, qapp, tmp_path):
    old = qapp.styleSheet()
    qapp.setStyleSheet(style_sheet())
    try:
        dialog = shown_on_the_small_screen(DIALOGS["RetranscribeDialog"](tmp_path), qtbot)
        assert "0:01:23.4 – 1:02:04.0, 1:00:40.6 long" in dialog.range.text()
        assert dialog.range.isVisible()
        spin = next(
            s for s in dialog.findChildren(QSpinBox) + dialog.findChildren(QDoubleSpinBox) if s.isEnabled()
        )
        dialog.scroll.ensureWidgetVisible(spin)
        before = spin.value()
        option = QStyleOptionSpinBox()
        spin.initStyleOption(option)
        up = spin.style().subControlRect(
            QStyle.ComplexControl.CC_SpinBox, option, QStyle.SubControl.SC_SpinBoxUp, spin
        )
        qtbot.mouseClick(spin, Qt.MouseButton.LeftButton, pos=up.center())
        assert spin.value() == before + spin.singleStep()
    finally:
        qapp.setStyleSheet(old)
