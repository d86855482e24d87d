"""Helpers for the app tests: wait for background jobs while Qt runs, isolated settings, the demo,
right-clicks on a transcript cell and choices in the menu that opens, threads' niceness."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QSettings, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QInputDialog, QMenu

from app import commands
from app import speakers as sp
from app.engine_process import NICE
from app.envelope import EnvelopePyramid
from app.main_window import MainWindow
from app.settings import SettingsStore
from app.transcript_model import SPEAKER
from app.widgets.waveform_view import WaveformView
from engine.types import Transcript

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "meeting.flac"
LINUX = sys.platform.startswith("linux")  # where each thread has a niceness of its own


def thread_niceness() -> int:
    """The calling thread's niceness (0 where threads have none of their own)."""
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) if LINUX else 0


def preempt_after(signal: Any, seconds: float = 0.3) -> None:
    """The thread that emits `signal` loses the CPU for `seconds` right after (as a thread stepped
    back from the window does on two busy cores): what it tells next comes that much later."""
    signal.connect(lambda *_: time.sleep(seconds), Qt.ConnectionType.DirectConnection)


def stepped_back() -> int:
    """The niceness of a thread that stepped back from the window's (this process's first thread)."""
    return min(os.getpriority(os.PRIO_PROCESS, os.getpid()) + NICE, 19)


def two_stream_file(folder: Path) -> Path:
    """An MKV whose first (default) audio stream is silence and whose second is 20 s of the demo."""
    path = folder / "two_streams.mkv"
    subprocess.run(
        ["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "20",
         "-i", str(DEMO), "-map", "0:a", "-map", "1:a", "-t", "20", "-c:a", "flac", str(path)],
        check=True, timeout=60,
    )  # fmt: skip
    return path


def wait_until(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Process Qt events until `condition()` holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s")
        QApplication.processEvents()
        time.sleep(0.005)
    QApplication.processEvents()


def fix_line(qtbot, window, row: int, text: str) -> None:
    """F2 on `row`, type `text` over it, Return: as a reviewer fixes a line."""
    view = window.transcript_view
    view.select_row(row)
    qtbot.keyClick(view, Qt.Key.Key_F2)
    editor = view.row_delegate.editor
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert window.model.utterance(row).text == text


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


def names(window) -> dict[str, str]:
    return {s.id: s.name for s in window.model.book}


def cell_center(window, row: int, column: int = SPEAKER) -> QPoint:
    view = window.transcript_view
    index = view.filter.mapFromSource(window.model.index(row, column))
    return view.visualRect(index).center()


LEFT, RIGHT = Qt.MouseButton.LeftButton, Qt.MouseButton.RightButton


def click_cell(window, row: int, column: int = SPEAKER, button: Qt.MouseButton = LEFT) -> None:
    """A click on a transcript cell through the window, as the user's mouse gives it (a right-click:
    Qt makes the context-menu event). The pointer first comes from the window's corner, as a real
    one arrives; a click where the last one was, in a window since closed, loses the context-menu
    event otherwise, and so does mixing QTest's clicks on widgets with clicks on windows."""
    view = window.transcript_view
    at = view.viewport().mapTo(window, cell_center(window, row, column))
    QTest.mouseMove(window.windowHandle(), QPoint(1, 1))
    QTest.mouseClick(window.windowHandle(), button, Qt.KeyboardModifier.NoModifier, at)
    QApplication.processEvents()


def right_click(window, row: int, column: int = SPEAKER) -> None:
    click_cell(window, row, column, RIGHT)


def open_menu() -> QMenu:
    wait_until(lambda: isinstance(QApplication.activePopupWidget(), QMenu), timeout=5)
    return QApplication.activePopupWidget()


def entries(menu: QMenu) -> list[str]:
    return [a.text() for a in menu.actions()]


def choose(menu: QMenu, label: str) -> None:
    menu.setActiveAction(menu.actions()[entries(menu).index(label)])
    QTest.keyClick(menu, Qt.Key.Key_Return)
    QApplication.processEvents()


def close_menus() -> None:
    while (popup := QApplication.activePopupWidget()) is not None:
        popup.close()
        QApplication.processEvents()


def run_window_on_sink(script: str, folder: Path) -> dict:
    """Run `script` (a window driven in its own process, printing one JSON object last) with a real
    PulseAudio null sink as its sound device; what it printed. Skips where no sink or PortAudio
    can run, or where the script reports a `reason` the device could not play."""
    import json
    import subprocess
    import sys

    import pytest

    from engine.testing.pulse_sink import SinkUnavailable, running_sink

    root = Path(__file__).resolve().parents[2]
    try:
        with running_sink() as sink:
            env = {**sink.env, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(root)}
            command = [sys.executable, "-c", script, str(folder)]
            run = subprocess.run(command, capture_output=True, text=True, cwd=root, env=env, timeout=180)
    except SinkUnavailable as exc:
        pytest.skip(str(exc))
    if "PortAudio library" in run.stderr:
        pytest.skip("PortAudio is not installed")
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    if out["reason"] is not None:
        pytest.skip(out["reason"])
    return out


def shown_waveform(
    qtbot, audio: EnvelopePyramid | None = None, size: tuple[int, int] = (1000, 300)
) -> WaveformView:
    """A waveform view of `size` on screen, with `audio` loaded (none: an empty view)."""
    view = WaveformView()
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    if audio is not None:
        view.set_audio(audio)
    qtbot.waitExposed(view)
    return view
