"""Helpers for the app tests: wait for background jobs while Qt runs, isolated settings, the demo."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QInputDialog

from app import commands
from app import speakers as sp
from app.main_window import MainWindow
from app.settings import SettingsStore
from engine.types import Transcript

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "meeting.flac"


def wait_until(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Process Qt events until `condition()` holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s")
        QApplication.processEvents()
        time.sleep(0.005)
    QApplication.processEvents()


def make_store(folder: Path) -> SettingsStore:
    return SettingsStore(QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat))


def open_demo(window: MainWindow, path: Path = DEMO) -> None:
    assert window.open_path(path)
    wait_until(lambda: not window.session.busy and window.session.prepared is not None)


def show_transcript(window: MainWindow, transcript: Transcript) -> None:
    """Put `transcript` in the window as a finished run would, its speakers named after it."""
    commands.set_document(window.model, transcript, sp.book_from_transcript(transcript), "Transcribe")


def answer_next_input(text: str) -> None:
    """Type `text` into the next input dialog (`QInputDialog`) once it is open, and accept it."""

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, QInputDialog):
            dialog.setTextValue(text)
            dialog.accept()
        else:
            QTimer.singleShot(20, answer)

    QTimer.singleShot(20, answer)
