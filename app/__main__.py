"""`murmur-app [FILE]`: start the desktop app, optionally opening a recording or a project.

Sets up the application (names, style, icon), a crash handler that logs and shows unexpected
errors instead of closing the window, offers to restore unsaved work left by sessions that
crashed (each autosave in turn; No deletes only the one asked about; those that cannot be restored
are set aside and reported once), then opens FILE if one was given: only after the user has
answered, and only once a restored recording has loaded, so the file never silently replaces
restored work.
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
from app.project_recovery import Recovery
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
    """Offer each crashed session's autosave in turn, newest first, each named with when it was
    saved and how many there are: Yes restores it (the others are kept and offered at the next
    start), No deletes only the one it was asked about. Autosaves that cannot be restored are
    moved aside and reported once."""
    set_aside = window.projects.set_aside()
    pending = window.projects.pending()
    for number, recovery in enumerate(pending, 1):
        answer = QMessageBox.question(
            window, "Restore unsaved work?", restore_question(recovery, number, len(pending))
        )
        if answer == QMessageBox.StandardButton.Yes:
            window.projects.restore(recovery)
            if number < len(pending):
                window.show_message(
                    f"{len(pending) - number} more autosave(s) kept; they are offered at the next start"
                )
            break
        recovery.path.unlink(missing_ok=True)
    if set_aside:
        named = "\n".join(f"  {path.name}: {reason}" for path, reason in set_aside)
        window.show_error(
            "An autosave cannot be restored",
            f"These autosaves cannot be restored by this "
            f"Murmur and were moved to {set_aside[0][0].parent}, where they are kept:\n{named}",
        )


def restore_question(recovery: Recovery, number: int, count: int) -> str:
    audio = Path(recovery.project.audio.path).name if recovery.project.audio else "no recording"
    project = (
        f", project {recovery.project_path.name or recovery.project_path}" if recovery.project_path else ""
    )
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(recovery.saved_at))
    which = f" ({number} of {count})" if count > 1 else ""
    lines = recovery.project.transcript.utterances if recovery.project.transcript else ()
    return (
        f"Murmur closed unexpectedly with unsaved edits{which}: {audio}{project}, {len(lines)} lines, "
        f"autosaved {when}.\nRestore them? No deletes this autosave."
    )


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
