"""`murmur-app [FILE]`: start the desktop app, optionally opening a recording or a project.

Sets up the application (names, style, icon), a crash handler that logs and shows unexpected
errors instead of closing the window, offers to restore unsaved work left by a session that
crashed, then opens FILE if one was given: only after the user has answered, and only once a
restored recording has loaded, so the file never silently replaces restored work.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import sys
import time
import traceback
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from app.main_window import MainWindow
from app.resources import icon
from app.theme import THEMES, desktop_scheme

log = logging.getLogger("murmur")


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="murmur-app", description="Murmur: transcribe and edit long recordings")
    p.add_argument("file", nargs="?", type=Path, help="a recording or a .murmur project to open")
    return p.parse_args(argv)


def install_crash_handler(window: MainWindow) -> None:
    def handler(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        log.error("unexpected error:\n%s", "".join(traceback.format_exception(kind, value, tb)))
        window.show_error("Unexpected error", f"{kind.__name__}: {value}\n\nYour work is still open; "
                          "please save it.")  # fmt: skip

    sys.excepthook = handler


def offer_recovery(window: MainWindow) -> None:
    pending = window.projects.pending()
    if not pending:
        return
    newest = pending[0]
    audio = Path(newest.project.audio.path).name if newest.project.audio else "no recording"
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(newest.saved_at))
    answer = QMessageBox.question(
        window, "Restore unsaved work?",
        f"Murmur closed unexpectedly with unsaved edits ({audio}, autosaved {when}).\n"
        "Restore them?",
    )  # fmt: skip
    if answer == QMessageBox.StandardButton.Yes:
        window.projects.restore(newest)
    else:
        for recovery in pending:
            recovery.path.unlink(missing_ok=True)


def start_up(window: MainWindow, file: Path | None) -> None:
    """Offer recovery first; open `file` only once the user has answered and a restore has loaded
    (opening it then asks before replacing restored, unsaved work)."""
    offer_recovery(window)
    window.recording.offer_recovery()  # recordings a crash cut short
    if file is not None:
        open_when_idle(window, file)


def open_when_idle(window: MainWindow, file: Path) -> None:
    """Open `file` now, or as soon as the running job (e.g. loading a restored recording) ends."""
    session = window.session
    if not session.busy:
        window.open_path(file)
        return

    def on_busy(busy: bool) -> None:
        if not busy:
            session.busy_changed.disconnect(on_busy)
            window.open_path(file)

    session.busy_changed.connect(on_busy)


def follow_desktop(app: QApplication, window: MainWindow) -> None:
    """The window's theme follows the desktop's colour scheme, now and when it changes."""
    window.apply_theme(THEMES[desktop_scheme(app)])
    app.styleHints().colorSchemeChanged.connect(lambda _: window.apply_theme(THEMES[desktop_scheme(app)]))


def main(argv: list[str] | None = None) -> int:
    multiprocessing.freeze_support()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    args = parse_args(sys.argv[1:] if argv is None else argv)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName("Murmur")
    app.setApplicationName("Murmur")
    app.setWindowIcon(icon("murmur"))
    app.setStyle("Fusion")  # draws with the palette on every desktop, so the dark theme is whole
    window = MainWindow()
    follow_desktop(app, window)
    install_crash_handler(window)
    window.show()
    if window.playback.reason:
        window.show_message(window.playback.reason)
    QTimer.singleShot(0, lambda: start_up(window, args.file))
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
