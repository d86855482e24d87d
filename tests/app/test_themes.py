"""The window follows the desktop's colour scheme: a real dark theme where every text keeps
≥ 4.5:1 contrast, and panes that stay usable down to 1024×600 (the waveform folds away). The
dark desktop runs as its own app process (through the real start-up path), since the palette and
style sheet are the whole application's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.speakers import PALETTE, contrast_ratio
from app.theme import DARK, LIGHT, contrast_table, style_sheet

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=["light", "dark"])
def test_every_text_has_at_least_4_5_to_1_contrast(theme):
    low = [(what, round(ratio, 2)) for what, _, _, ratio in contrast_table(theme) if ratio < 4.5]
    assert low == []


def test_speaker_colours_stay_apart_from_the_dark_background():
    ground = DARK.swap("#FBFCFD")
    assert min(contrast_ratio(c, ground) for c in PALETTE) >= 3.0  # graphics: WCAG 1.4.11


DARK_DESKTOP = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication, QLabel
    app = QApplication([])
    app.setStyle("Fusion")
    desktop = QPalette()  # what a dark desktop hands the app when it reports no colour scheme
    desktop.setColor(QPalette.ColorRole.Window, QColor("#202124"))
    app.setPalette(desktop)
    from app.__main__ import follow_desktop
    from app.main_window import MainWindow
    from app.settings import SettingsStore
    from PySide6.QtCore import QSettings
    folder = Path(sys.argv[1])
    store = SettingsStore(QSettings(str(folder / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(store, folder / "recovery")
    window.ask_before_closing = False
    window.resize(1280, 800)
    window.show()
    follow_desktop(app, window)
    for _ in range(20):
        app.processEvents()
    title = window.speaker_panel.findChild(QLabel, "panelTitle")
    table = window.transcript_view.viewport().grab().toImage()
    shot = window.grab().toImage()
    print(json.dumps({
        "theme": window.theme.name,
        "title": title.palette().color(title.foregroundRole()).name(),
        "table": table.pixelColor(table.width() - 5, table.height() - 5).lightness(),
        "status": shot.pixelColor(5, window.height() - 5).lightness(),
        "words": window.word_view.toHtml(),
        "time_ink": window.model.time_ink.name(),
    }))
    window.close()
""")


def test_a_dark_desktop_gets_the_dark_theme_everywhere(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", DARK_DESKTOP, str(tmp_path)]
    run = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["theme"] == "dark"
    assert contrast_ratio(seen["title"], DARK.swap("#F4F6F8")) >= 4.5
    assert seen["table"] < 60 and seen["status"] < 80, "dark table and status bar"
    assert DARK.swap("#5B6670").lower() in seen["words"].lower()
    assert seen["time_ink"].upper() == DARK.swap("#5B6670")


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
