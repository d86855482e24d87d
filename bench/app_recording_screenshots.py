"""Render a recording in progress and the captions window (offscreen) for docs/app.md.

The demo meeting is played through the real capture path (`FileSource` at real-time speed, the
same stream class a microphone uses) into the window's Record feature, with live transcription
and provisional speakers; after `--seconds` of it the main window is grabbed at 1440×900 with
the recording bar, the growing waveform and the live lines, then the captions window in dark and
light at 1280×400. The recording is then stopped and nothing else runs.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/app_recording_screenshots.py docs
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo" / "meeting.flac"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--seconds", type=float, default=42.0, help="how much of the demo to record first")
    args = ap.parse_args()

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from app.resources import style_sheet
    from app.settings import SettingsStore
    from engine.live.sources import FileSource

    app = QApplication.instance() or QApplication([])
    app.setStyleSheet(style_sheet())
    with tempfile.TemporaryDirectory() as tmp:
        store = SettingsStore(QSettings(str(Path(tmp) / "s.ini"), QSettings.Format.IniFormat))
        store.set_value("recordings_folder", tmp)
        window = MainWindow(store, Path(tmp) / "recovery", autosave_ms=600_000)
        window.ask_before_closing = False
        window.resize(1440, 900)
        window.show()
        feature = window.recording
        feature.panel.set_devices(["Built-in Microphone", "USB Headset"], "USB Headset")
        if not feature.start(FileSource(DEMO)):
            raise SystemExit("recording did not start")
        feature.panel.set_devices(["Built-in Microphone", "USB Headset"], "USB Headset")
        deadline = time.monotonic() + args.seconds
        while time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.02)
        window.transcript_view.scrollToBottom()
        app.processEvents()
        args.folder.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(args.folder / "app-recording.png"))
        captions = feature.captions
        captions.resize(1280, 400)
        captions.show()
        for theme in ("dark", "light"):
            captions.set_theme(theme)
            app.processEvents()
            captions.grab().save(str(args.folder / f"app-captions-{theme}.png"))
        print(f"{feature.controller.session.status()}; wrote app-recording.png, app-captions-dark.png, "
              f"app-captions-light.png to {args.folder}")  # fmt: skip
        feature.shutdown()
        window.close()


if __name__ == "__main__":
    main()
