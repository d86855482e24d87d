"""Project files a user should never lose work or the window to: impossible times, unsaved edits
when another project opens, and a recovery offer when the app starts with a file to open."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtWidgets import QApplication, QMessageBox
from qt_helpers import make_store, wait_until

import app.__main__ as app_main
from app import commands
from app import speakers as sp
from app.main_window import MainWindow
from app.project import Project, ProjectError, load_project, save_project
from app.project_recovery import RecoveryStore
from engine.types import Speaker, Transcript, Utterance

Buttons = QMessageBox.StandardButton


def tone(path: Path, seconds: float = 1.0) -> Path:
    t = np.arange(int(16000 * seconds)) / 16000
    sf.write(path, (0.1 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16000)
    return path


def small_transcript(text: str = "We said this.") -> Transcript:
    return Transcript((Utterance(0.1, 0.8, text, "S1"),), (Speaker("S1", "Ann"),), duration=1.0)


def project_text(tmp_path: Path) -> dict:
    path = tmp_path / "good.murmur"
    save_project(
        Project(transcript=small_transcript(), speakers=sp.book_from_transcript(small_transcript())), path
    )
    return json.loads(path.read_text())


U0 = ("transcript", "utterances", 0)
BAD_FIELDS = {  # where in the project file, and the raw JSON written there
    "utterance start NaN": ((*U0, "start"), "NaN"),
    "utterance end inf": ((*U0, "end"), "Infinity"),
    "utterance start -inf": ((*U0, "start"), "-Infinity"),
    "utterance start 1e308": ((*U0, "start"), "1e308"),
    "transcript duration 1e400": (("transcript", "duration"), "1e400"),
    "audio duration NaN": (("audio",), '{"path": "/x/a.wav", "duration": NaN}'),
    "speech end 1e400 as an integer": (("speech",), "[[0, 1" + "0" * 400 + "]]"),
    "speech end inf": (("speech",), "[[0, Infinity]]"),
    "chunk start NaN": (("chunks",), "[[NaN, 1.0]]"),
}


def bad_project(tmp_path: Path, case: str) -> Path:
    data = project_text(tmp_path)
    where, raw = BAD_FIELDS[case]
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = "@@HERE@@"
    path = tmp_path / "bad.murmur"
    path.write_text(json.dumps(data, indent=1).replace('"@@HERE@@"', raw))
    return path


@pytest.mark.parametrize("case", list(BAD_FIELDS))
def test_a_project_with_an_impossible_time_is_refused_at_load(tmp_path, case):
    with pytest.raises(ProjectError, match=r"not a valid Murmur project: .*(time|number|range)"):
        load_project(bad_project(tmp_path, case))


def test_opening_a_project_with_nan_times_shows_an_error_and_keeps_the_window(make_window, tmp_path):
    w = make_window()
    commands.set_document(
        w.model, small_transcript("Kept."), sp.book_from_transcript(small_transcript()), "t"
    )
    w.undo_stack.setClean()
    assert not w.open_path(bad_project(tmp_path, "utterance start NaN"))
    assert w.last_dialog is not None and "Cannot open this project" in w.last_dialog.windowTitle()
    assert "utterances[0].start" in w.last_dialog.text()
    assert w.model.utterance(0).text == "Kept."
    w.speaker_panel.refresh()


def test_the_app_started_on_a_nan_project_does_not_crash(tmp_path):
    path = bad_project(tmp_path, "utterance start NaN")
    script = (
        "import sys; from PySide6.QtCore import QTimer; from PySide6.QtWidgets import QApplication;"
        "import app.__main__ as m; app = QApplication([]);"
        "QTimer.singleShot(3000, app.quit); sys.exit(m.main([sys.argv[1]]))"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path), "PYTHONPATH": str(root)}
    result = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                            env=env, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr


# ------------------------------------------------------------------ unsaved edits, another project


def edited_window(make_window, tmp_path: Path) -> MainWindow:
    w = make_window()
    w.ask_before_closing = True
    transcript = small_transcript()
    commands.set_document(w.model, transcript, sp.book_from_transcript(transcript), "Transcribe")
    w.undo_stack.setClean()
    commands.edit_text(w.model, 0, "An edit nobody saved.")
    return w


def other_project(tmp_path: Path) -> Path:
    path = tmp_path / "other.murmur"
    t = small_transcript("From the other project.")
    save_project(Project(transcript=t, speakers=sp.book_from_transcript(t)), path)
    return path


def test_opening_a_project_asks_before_discarding_unsaved_edits(make_window, tmp_path, answers):
    asked, table = answers
    w = edited_window(make_window, tmp_path)
    table["Unsaved changes"] = Buttons.Cancel
    assert not w.open_path(other_project(tmp_path))
    assert asked == ["Unsaved changes"]
    assert w.model.utterance(0).text == "An edit nobody saved." and w.isWindowModified()
    table["Unsaved changes"] = Buttons.Discard
    assert w.open_path(other_project(tmp_path))
    assert w.model.utterance(0).text == "From the other project."


# ------------------------------------------------------------------ recovery at start-up with a FILE


def _dead_pid() -> int:
    command = [sys.executable, "-c", "import os; print(os.getpid())"]
    return int(subprocess.run(command, capture_output=True, text=True).stdout)


class _App:
    """Stands in for QApplication in `main`: the real one, whose `exec` runs events for a while."""

    def __init__(self, real: QApplication, seconds: float) -> None:
        self.real = real
        self.seconds = seconds

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    def exec(self) -> int:
        import time

        end = time.monotonic() + self.seconds
        while time.monotonic() < end:
            QApplication.processEvents()
            time.sleep(0.01)
        return 0


@pytest.fixture
def start_app(qapp, tmp_path, monkeypatch):
    """Run `murmur-app FILE` in process with a crashed session's autosave waiting; gives the window."""
    recovery = tmp_path / "recovery"
    restored_audio = tone(tmp_path / "restored.wav")
    crashed = RecoveryStore(recovery, pid=_dead_pid())
    t = small_transcript("Restored words.")
    crashed.write(Project(transcript=t, speakers=sp.book_from_transcript(t)), None)
    data = json.loads(crashed.path.read_text())
    data["audio"] = {"path": str(restored_audio), "relative": None, "size": None, "duration": 1.0}
    crashed.path.write_text(json.dumps(data))
    windows: list[MainWindow] = []

    def window_factory() -> MainWindow:
        w = MainWindow(make_store(tmp_path), recovery, autosave_ms=60_000)
        windows.append(w)
        return w

    monkeypatch.setattr(app_main, "MainWindow", window_factory)

    def start(file: Path, seconds: float = 1.0) -> MainWindow:
        monkeypatch.setattr(app_main.QApplication, "instance", staticmethod(lambda: _App(qapp, seconds)))
        app_main.main([str(file)])
        return windows[0]

    yield start, crashed.path
    for w in windows:
        w.ask_before_closing = False
        w.close()
        w.deleteLater()
    QApplication.processEvents()


def slow_question(asked: list, seen: list, recovery_file: Path, table: dict):
    """A user who reads the question for half a second (Qt keeps running) before answering."""

    def question(parent, title, text, *args, **kwargs):
        import time

        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            QApplication.processEvents()
            time.sleep(0.01)
        asked.append(title)
        session = parent.session
        seen.append((title, session.pending_path, recovery_file.exists()))
        return table[title]

    return question


@pytest.mark.parametrize("restore", [True, False])
def test_recovery_is_offered_before_the_file_on_the_command_line(start_app, tmp_path, monkeypatch, restore):
    start, recovery_file = start_app
    file = tone(tmp_path / "given.wav")
    asked: list[str] = []
    seen: list[tuple] = []
    table = {
        "Restore unsaved work?": Buttons.Yes if restore else Buttons.No,
        "Unsaved changes": Buttons.Cancel,
    }
    monkeypatch.setattr(
        QMessageBox, "question", staticmethod(slow_question(asked, seen, recovery_file, table))
    )
    w = start(file)
    wait_until(lambda: not w.session.busy, timeout=30)
    first = seen[0]
    assert first[0] == "Restore unsaved work?"
    assert first[1] is None, "the file began loading while the recovery question was open"
    assert first[2], "the autosave was removed before the user answered"
    if restore:
        assert asked == ["Restore unsaved work?", "Unsaved changes"]
        assert w.model.rowCount() == 1 and w.model.utterance(0).text == "Restored words."
        assert w.session.audio is not None and w.session.audio.path.name == "restored.wav"
        assert w.projects.recovery.path.exists() and not recovery_file.exists()
    else:
        assert asked == ["Restore unsaved work?"]
        assert w.session.audio is not None and w.session.audio.path == file
        assert not recovery_file.exists() and w.model.rowCount() == 0
