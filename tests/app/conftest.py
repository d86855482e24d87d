"""Shared fixtures for the app tests: offscreen Qt, isolated settings, a window factory, the demo
transcript produced once by the real worker, and `wait_until` for background jobs."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import gc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication, QMessageBox
from qt_helpers import make_store, open_demo, show_transcript, wait_until

from app.main_window import MainWindow
from app.settings import SettingsStore
from engine.types import Stage, Transcript


def close_all(windows: list[MainWindow]) -> None:
    for window in windows:
        window.close()
        window.deleteLater()
    windows.clear()


def collect_on_this_thread() -> None:
    """Delete the closed windows and collect their reference cycles here, on the GUI thread. Left to
    the collector, they are freed by whichever thread allocates next (a loader of a later test's
    window), and a Qt object destroyed off its thread can crash the process."""
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


@pytest.fixture
def make_window(qapp: QApplication, tmp_path: Path) -> Iterator[Callable[..., MainWindow]]:
    windows: list[MainWindow] = []

    def make(recovery: Path | None = None, store: SettingsStore | None = None) -> MainWindow:
        store = store or make_store(tmp_path)
        window = MainWindow(store, recovery or tmp_path / "recovery", autosave_ms=60_000)
        window.ask_before_closing = False
        window.resize(1280, 800)
        window.show()
        windows.append(window)
        return window

    yield make
    close_all(windows)
    QApplication.processEvents()
    collect_on_this_thread()


@dataclass(frozen=True)
class DemoRun:
    transcript: Transcript
    live_rows: list[int]  # table rows each time a chunk result arrived, before the run finished
    stages: list[Stage]
    undo_text: str


@pytest.fixture(scope="session")
def demo_run(qapp: QApplication, tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The demo transcribed once through the real worker thread with the bundled whisper model."""
    folder = tmp_path_factory.mktemp("demo-run")
    window = MainWindow(make_store(folder), folder / "recovery", autosave_ms=60_000)
    window.ask_before_closing = False
    live_rows: list[int] = []
    stages: list[Stage] = []
    window.session.runner.worker.partial.connect(lambda _: live_rows.append(-1))
    window.model.document_changed.connect(
        lambda: live_rows.append(window.model.rowCount()) if window.session.busy else None
    )
    window.session.progress.connect(lambda p: stages.append(p.stage))
    try:
        open_demo(window)
        stages.clear()
        assert window.transcribe()
        wait_until(lambda: not window.session.busy, timeout=300)
        transcript = window.model.transcript()
        undo_text = window.undo_stack.undoText()
    finally:
        window.close()
        window.deleteLater()
    assert transcript.utterances, "the demo produced no transcript"
    return DemoRun(transcript, [r for r in live_rows if r >= 0], list(dict.fromkeys(stages)), undo_text)


@pytest.fixture
def demo_transcript(demo_run: DemoRun) -> Transcript:
    return demo_run.transcript


@pytest.fixture
def demo_window(make_window: Callable[..., MainWindow], demo_transcript: Transcript) -> MainWindow:
    """A window with the demo open and its transcript shown."""
    window = make_window()
    open_demo(window)
    show_transcript(window, demo_transcript)
    return window


@pytest.fixture
def answers(monkeypatch):
    """Answers to QMessageBox.question by title; records each question asked."""
    asked: list[str] = []
    table: dict[str, QMessageBox.StandardButton] = {}

    def question(parent, title, text, *args, **kwargs):
        asked.append(title)
        return table[title]

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    return asked, table
