"""The window follows the desktop's colour scheme: a real dark theme where every text keeps
≥ 4.5:1 contrast, and panes that stay usable down to 1024×600 (the waveform folds away)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from app.speakers import PALETTE, contrast_ratio
from app.theme import DARK, LIGHT, THEMES, contrast_table, desktop_scheme, style_sheet


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=["light", "dark"])
def test_every_text_has_at_least_4_5_to_1_contrast(theme):
    low = [(what, round(ratio, 2)) for what, _, _, ratio in contrast_table(theme) if ratio < 4.5]
    assert low == []


def test_speaker_colours_stay_apart_from_the_dark_background():
    ground = DARK.swap("#FBFCFD")
    assert min(contrast_ratio(c, ground) for c in PALETTE) >= 3.0  # graphics: WCAG 1.4.11


def test_a_dark_desktop_gets_the_dark_theme_everywhere(make_window, demo_transcript, qtbot):
    app = QApplication.instance()
    old_palette, old_sheet = app.palette(), app.styleSheet()
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Window, QColor("#202124"))
    try:
        app.setPalette(dark)
        if app.styleHints().colorScheme() != Qt.ColorScheme.Light:
            assert desktop_scheme(app) == "dark"
        window = make_window()
        window.apply_theme(THEMES["dark"])
        from qt_helpers import open_demo, show_transcript

        open_demo(window)
        show_transcript(window, demo_transcript)
        window.transcript_view.select_row(2)
        qtbot.wait(50)
        image = window.grab().toImage()
        title = window.speaker_panel.findChild(type(window.position_label), "panelTitle")
        assert title is not None
        ink = title.palette().color(title.foregroundRole())
        assert app.palette().color(QPalette.ColorRole.Window).lightness() < 60
        table = window.transcript_view.viewport().grab().toImage()
        assert table.pixelColor(table.width() - 5, table.height() - 5).lightness() < 60, "a dark table"
        assert image.pixelColor(5, window.height() - 5).lightness() < 80, "a dark status bar"
        assert contrast_ratio(ink.name(), DARK.swap("#F4F6F8")) >= 4.5
        assert DARK.swap("#5B6670") in window.word_view.toHtml().upper()
        assert window.model.time_ink.name().upper() == DARK.swap("#5B6670")
    finally:
        window.apply_theme(LIGHT)
        app.setPalette(old_palette)
        app.setStyleSheet(old_sheet)


def test_the_dark_style_sheet_keeps_no_light_surface():
    sheet = style_sheet(DARK).upper()
    for light in ("#FFFFFF", "#F4F6F8", "#F8FAFB", "#1F2933"):
        assert light not in sheet


def test_at_1024x600_the_table_keeps_most_of_the_height_and_the_waveform_folds_away(demo_window, qtbot):
    window = demo_window
    window.resize(1024, 600)
    qtbot.waitUntil(lambda: window.height() == 600)
    qtbot.wait(100)
    view, words = window.transcript_view, window.word_view
    shown = view.viewport().height()
    assert shown >= 240, "about seven lines of the demo"
    assert words.height() >= words.document().size().height() or words.verticalScrollBar().isVisible()
    window.actions_by_name["toggle_waveform"].trigger()
    qtbot.waitUntil(lambda: window.splitter.sizes()[0] == 0)
    assert view.viewport().height() >= shown + 80
    assert not window.actions_by_name["toggle_waveform"].isChecked()
    window.actions_by_name["toggle_waveform"].trigger()
    qtbot.waitUntil(lambda: window.splitter.sizes()[0] >= window.waveform.minimumHeight())
