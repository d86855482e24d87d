"""Scroll bars are drawn from the style sheet's flat rules, in each theme's colours: the
transcript's bar repaints with every line that arrives, and the style's own drawing took a
millisecond or more each time (bench notes in docs/lab-log.md)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QScrollBar

from app.theme import DARK, LIGHT, Theme, style_sheet

TRACK, HANDLE = "#F4F6F8", "#9AA3AD"  # the light theme's colours in resources/murmur.qss


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=["light", "dark"])
def test_a_scroll_bar_shows_a_flat_track_and_handle_in_the_themes_colours(qtbot, theme: Theme) -> None:
    bar = QScrollBar(Qt.Orientation.Vertical)
    bar.setStyleSheet(style_sheet(theme))
    bar.resize(12, 400)
    bar.setRange(0, 1000)
    bar.setPageStep(100)
    bar.setValue(1000)  # the handle at the bottom, the track above it
    qtbot.addWidget(bar)
    bar.show()
    qtbot.waitExposed(bar)
    QApplication.processEvents()
    shot = bar.grab().toImage()
    assert shot.pixelColor(6, 20).name().upper() == theme.swap(TRACK).upper()
    assert shot.pixelColor(6, 390).name().upper() == theme.swap(HANDLE).upper()
