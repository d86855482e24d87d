"""`murmur-selftest [OUT.json]`: check an installed Murmur end to end, the way a user works with it.

Opens the demo recording shipped with Murmur in the desktop app's main window, transcribes it
with the default settings (the app's own worker thread and engine pipeline), prints the number of
lines and speakers and the first lines, writes the transcript as Murmur JSON to OUT.json when
given, closes the window and exits: 0 when the transcript has text, 1 when it is empty, an error
was shown or it took longer than --timeout seconds. User settings and unsaved-work recovery are
not touched (a temporary settings file and recovery folder are used). Runs offscreen unless
QT_QPA_PLATFORM says otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def wait_idle(app: object, window: object, deadline: float) -> bool:
    """Process events until the window's background job is over; False on the deadline."""
    while window.session.busy:  # type: ignore[attr-defined]
        if time.monotonic() > deadline:
            return False
        app.processEvents()  # type: ignore[attr-defined]
        time.sleep(0.01)
    app.processEvents()  # type: ignore[attr-defined]
    return True


def run(out: Path | None, timeout: float) -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from app.resources import resource_path, style_sheet
    from app.settings import SettingsStore
    from engine.export import export

    demo = resource_path("demo", "meeting.flac")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setStyleSheet(style_sheet())
    errors: list[str] = []
    deadline = time.monotonic() + timeout
    with tempfile.TemporaryDirectory() as scratch:
        store = SettingsStore(QSettings(str(Path(scratch) / "settings.ini"), QSettings.Format.IniFormat))
        window = MainWindow(store, Path(scratch) / "recovery")
        window.ask_before_closing = False
        window.session.error.connect(lambda title, text: errors.append(f"{title}: {text}"))
        window.show()
        started = time.monotonic()
        opened = window.open_path(demo) and wait_idle(app, window, deadline)
        done = opened and window.transcribe() and wait_idle(app, window, deadline)
        seconds = time.monotonic() - started
        transcript = window.model.transcript()
        window.close()
        app.processEvents()
    if out is not None:
        export(transcript, out, ["json"])
    lines = transcript.utterances
    speakers = {u.speaker for u in lines if u.speaker is not None}
    print(f"{demo.name}: {len(lines)} lines, {len(speakers)} speakers in {seconds:.1f} s")
    for u in lines[:3]:
        print(f"  [{u.start:6.1f} s] {u.speaker}: {u.text}")
    for error in errors:
        print(f"error shown: {error}", file=sys.stderr)
    if not done:
        print(
            "the demo was not transcribed in time" if not errors else "transcription failed", file=sys.stderr
        )
    return 0 if done and not errors and any(u.text.strip() for u in lines) else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="murmur-selftest", description=__doc__.split("\n")[0])
    p.add_argument("out", nargs="?", type=Path, help="write the transcript here as Murmur JSON")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds before giving up (default 600)")
    args = p.parse_args(argv)
    return run(args.out, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
