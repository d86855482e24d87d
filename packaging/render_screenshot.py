"""Render docs/screenshot.png: the main window with the demo meeting opened and transcribed.

    python packaging/render_screenshot.py [OUT.png]

Runs offscreen: opens resources/demo/meeting.flac, transcribes it through the app's own worker
with the bundled whisper model, selects an utterance and saves a grab of the window (with a
PulseAudio null sink as its sound card where one can start, so playback is available). When the
engine gives no speakers (a backend and pipeline without speaker identification), the speakers
are assigned the way a user would do it in the editor — one new speaker per person, each
utterance given to the person the demo's reference (meeting.rttm) says is talking — so the lanes
and chips can be shown; a note is printed when that happens.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app import commands  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from app.resources import style_sheet  # noqa: E402
from app.settings import SettingsStore  # noqa: E402

DEMO = ROOT / "resources" / "demo" / "meeting.flac"
REFERENCE = ROOT / "resources" / "demo" / "meeting.rttm"
SIZE = (1440, 900)


def wait(app: QApplication, window: MainWindow, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while window.session.busy:
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the background job")
        app.processEvents()
        time.sleep(0.01)
    app.processEvents()


def reference_turns() -> list[tuple[float, float, str]]:
    turns = []
    for line in REFERENCE.read_text().splitlines():
        f = line.split()
        if f and f[0] == "SPEAKER":
            turns.append((float(f[3]), float(f[3]) + float(f[4]), f[7]))
    return turns


def assign_reference_speakers(window: MainWindow) -> None:
    """Give each utterance to the reference speaker who talks most during it, through the editor."""
    turns = reference_turns()
    names = list(dict.fromkeys(name for _, _, name in turns))
    ids = {name: commands.add_speaker(window.model, name.capitalize()).id for name in names}
    for row, u in enumerate(window.model.utterances):
        overlap = dict.fromkeys(names, 0.0)
        for a, b, name in turns:
            overlap[name] += max(0.0, min(u.end, b) - max(u.start, a))
        best = max(overlap, key=overlap.__getitem__)
        if overlap[best] > 0:
            commands.set_speaker(window.model, [row], ids[best])


def main(out: Path) -> None:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setStyleSheet(style_sheet())
    with tempfile.TemporaryDirectory() as scratch:
        store = SettingsStore(QSettings(str(Path(scratch) / "settings.ini"), QSettings.Format.IniFormat))
        window = MainWindow(store, Path(scratch) / "recovery")
        window.ask_before_closing = False
        window.resize(*SIZE)
        window.show()
        window.open_path(DEMO)
        wait(app, window)
        window.transcribe()
        wait(app, window)
        if not window.model.book:
            print("note: the engine gave no speakers; assigning them from the demo's reference in the editor")
            assign_reference_speakers(window)
        message = window.statusBar().currentMessage()
        window.transcript_view.select_row(6)
        window.waveform.show_all()
        u = window.model.utterance(6)
        window.playback.seek((u.start + u.end) / 2)
        window.statusBar().showMessage(message or "Transcribed", 0)
        app.processEvents()
        window.grab().save(str(out))
        window.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    from engine.testing.pulse_sink import SinkUnavailable, pointed_here, running_sink

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshot.png"
    try:  # a null sink as the sound card, so the playback box shows what a user with speakers sees
        with running_sink() as sink, pointed_here(sink.env):
            main(target)
    except SinkUnavailable as exc:
        print(f"no audio output: {exc}")
        main(target)
