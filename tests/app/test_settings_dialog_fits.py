"""The settings dialog on a small screen (1024×600, a netbook or a projector): it fits, its rows
scroll, and OK stays where the user can press it."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QDialogButtonBox

from app.settings import TranscribeSettings, setting_names
from app.widgets.settings_dialog import SettingsDialog

SCREEN = QRect(0, 0, 1024, 600)


def test_the_dialog_fits_a_1024_by_600_screen_with_ok_on_it(qtbot):
    dialog = SettingsDialog(TranscribeSettings(backend="vibevoice"))
    qtbot.addWidget(dialog)
    assert dialog.minimumSizeHint().height() <= SCREEN.height()  # it can be made to fit
    dialog.resize(min(dialog.sizeHint().width(), SCREEN.width()), SCREEN.height() - 40)  # a title bar
    dialog.show()
    qtbot.waitExposed(dialog)
    ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    corner = ok.mapTo(dialog, QPoint(ok.width() - 1, ok.height() - 1))
    assert ok.isVisible() and dialog.rect().contains(corner)  # OK is on screen, not below it
    last = dialog.editors[setting_names()[-1]]
    dialog.scroll.ensureWidgetVisible(last)  # the last row can be scrolled to
    assert dialog.scroll.verticalScrollBar().value() > 0 and last.visibleRegion().isEmpty() is False
