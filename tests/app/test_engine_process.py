"""The engine in its own process: the app's local runs go to a `murmur serve` child it starts, with
a key kept off the command line; the settings reach the engine (local or remote) with each run; an
engine killed mid-run loses nothing the user had and restarts from the message that says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from qt_helpers import DEMO, open_demo, wait_until

from app import commands
from app.engine_process import EngineProcess
from app.settings import TranscribeSettings
from app.window_transcribe import RESTART
from app.worker import ENGINE_STOPPED
from engine.audio.io import load_audio
from engine.errors import ServerError
from engine.remote.client import RemoteClient
from engine.types import Stage, Transcript, Utterance
from tests.engine.serve.conftest import ROOT, server, write_flac

ENV = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1"}


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    """The first 40 s of the demo meeting: four voices found, two chunks."""
    demo = load_audio(DEMO, 16000)
    return write_flac(tmp_path_factory.mktemp("engine") / "meeting40.flac", demo.samples[: 40 * 16000])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "zombie" not in status.read_text()


def test_the_engine_key_stays_off_the_command_line_and_only_its_holder_is_served(tmp_path, monkeypatch):
    # catches: the key handed over as `--api-key KEY` (every user of the machine reads it in `ps`)
    # and: the child started from the calling thread (PR_SET_PDEATHSIG kills it as soon as that
    # thread ends: a recording's connecting thread, the watch folder's)
    # and: code run between fork and exec (`preexec_fn`), which makes Python fork the whole app
    # while it holds the window's interpreter (15–37 ms for a 0.9–2 GB app) instead of vfork
    popen, asked = subprocess.Popen, []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **kw: asked.append(kw) or popen(*a, **kw))
    engine = EngineProcess()
    try:
        answer: list[tuple[str, str]] = []
        caller = threading.Thread(target=lambda: answer.append(engine.ensure(["--backend", "whisper",
                                                                              "--diarizer", "none"])))
        caller.start()
        caller.join()  # the thread that asked for the engine has ended
        (url, key), pid = answer[0], engine.pid
        command = Path(f"/proc/{pid}/cmdline").read_bytes().decode()
        assert "engine\0serve" in command and "--host\x00127.0.0.1" in command
        assert key not in command and len(key) >= 16
        # and: the engine at the window's priority (its decoding takes the CPU the window draws with)
        assert os.getpriority(os.PRIO_PROCESS, pid) > os.getpriority(os.PRIO_PROCESS, 0)
        assert [kw.get("preexec_fn") for kw in asked] == [None]
        assert "tiny.en" in RemoteClient(url, key).check()
        with pytest.raises(ServerError, match="401"):
            RemoteClient(url, "not-the-engine-key").check()
        assert engine.ensure(["--backend", "whisper", "--diarizer", "none"]) == (url, key)  # kept running
        assert engine.pid == pid
    finally:
        engine.stop()
    assert not alive(pid) and engine.exit_reason() is None


@pytest.mark.slow
def test_an_engine_whose_app_dies_dies_with_it(tmp_path):
    # catches: the child started without PR_SET_PDEATHSIG (a crashed app leaves a model in memory)
    script = textwrap.dedent("""
        import time
        from app.engine_process import EngineProcess
        engine = EngineProcess()
        engine.ensure(["--backend", "whisper", "--diarizer", "none"])
        print(engine.pid, flush=True)
        time.sleep(600)
    """)
    env = {**ENV, "TMPDIR": str(tmp_path)}  # a killed app cannot remove its engine's folder
    app = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                           text=True)  # fmt: skip
    try:
        child = int(app.stdout.readline())  # type: ignore[union-attr]
        assert alive(child)
    finally:
        app.kill()
        app.wait()
    deadline = time.monotonic() + 30
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child), "the engine outlived the app"


RUN = """
import json, os, sys
from pathlib import Path
from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
app = QApplication([])
sys.path.insert(0, str(Path("tests/app").resolve()))
from qt_helpers import make_store, open_demo, wait_until
from app.main_window import MainWindow
folder = Path(sys.argv[2])
window = MainWindow(make_store(folder), folder / "recovery", autosave_ms=60_000)
window.ask_before_closing = False
window.show()
open_demo(window, Path(sys.argv[1]))
QTest.keyClick(window.transcript_view, Qt.Key.Key_F5)
wait_until(lambda: not window.session.busy, timeout=300)
engine = window.session.runner.worker.engine
command = Path(f"/proc/{engine.pid}/cmdline").read_bytes().decode().split(chr(0))
loaded = sorted(m for m in ("faster_whisper", "ctranslate2", "torch") if m in sys.modules)
print(json.dumps({"lines": window.model.rowCount(), "model": window.model.meta.model, "pid": engine.pid,
                  "command": command, "gui_pid": os.getpid(), "loaded": loaded}))
window.close()
"""


@pytest.mark.slow
def test_a_local_run_goes_through_the_engine_process_and_the_window_never_loads_the_decoder(clip, tmp_path):
    # catches: the worker transcribing with an in-process Pipeline (the GIL shared with the editor)
    done = subprocess.run([sys.executable, "-c", RUN, str(clip), str(tmp_path)], env=ENV, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["lines"] > 3 and seen["model"] == "faster-whisper tiny.en"
    assert seen["loaded"] == [], "the window's process loaded the decoder"
    assert seen["pid"] != seen["gui_pid"] and seen["command"][1:4] == ["-m", "engine", "serve"]
    assert not alive(seen["pid"]), "the engine outlived the window that closed"


def typed_line(window, text: str) -> None:
    """Select the first line and type `text` over it, as a user does (F2, type, Return)."""
    from PySide6.QtTest import QTest

    view = window.transcript_view
    view.select_row(0)
    QTest.keyClick(view, Qt.Key.Key_F2)
    editor = view.row_delegate.editor
    editor.selectAll()
    QTest.keyClicks(editor, text)
    QTest.keyClick(editor, Qt.Key.Key_Return)


@pytest.mark.slow
def test_an_engine_killed_mid_run_keeps_the_lines_and_edits_and_restarts_from_the_message(make_window, clip,
                                                                                          qtbot):  # fmt: skip
    # catches: the snapshot not restored on a lost engine, or the restart button never wired
    window = make_window()
    open_demo(window, clip)
    lines = (Utterance(1.0, 3.0, "A line from before.", "S1"), Utterance(4.0, 6.0, "Another one.", "S2"))
    commands.set_document(window.model, Transcript(utterances=lines), window.model.book, "Transcribe")
    typed_line(window, "Fixed by hand.")
    before = window.model.utterances
    assert before[0].text == "Fixed by hand."
    engine = window.session.runner.worker.engine
    stages: list[Stage] = []
    window.session.progress.connect(lambda p: stages.append(p.stage))
    qtbot.keyClick(window.transcript_view, Qt.Key.Key_F5)
    wait_until(lambda: Stage.VAD in stages, timeout=300)  # the engine is at work on this run
    killed = engine.pid
    os.kill(killed, signal.SIGKILL)
    wait_until(lambda: not window.session.busy, timeout=60)
    dialog = window.last_dialog
    assert dialog.windowTitle() == ENGINE_STOPPED
    assert "The engine stopped unexpectedly (killed by signal 9" in dialog.text()
    assert window.model.utterances == before and not window.model.read_only
    restart = next(b for b in dialog.buttons() if b.text() == RESTART)
    qtbot.mouseClick(restart, Qt.MouseButton.LeftButton)
    wait_until(lambda: not window.session.busy, timeout=300)
    assert engine.running() and engine.pid != killed
    assert "running again" in window.statusBar().currentMessage()
    window.activateWindow()  # the message had the focus: shortcuts go to the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    with qtbot.waitSignal(window.session.transcribed, timeout=300_000):
        qtbot.keyClick(window.transcript_view, Qt.Key.Key_F5)
    assert window.model.rowCount() > 3
    window.undo_stack.undo()  # the run is one step: before it, the lines and the edit as they were
    assert window.model.utterances == before


@pytest.mark.slow
def test_speaker_settings_reach_the_engine_and_a_remote_server_and_the_rest_its_flags(make_window, clip):
    # catches: per-request settings dropped on the way (the run would use the server's own), or
    # the engine started without the flags of the settings it holds
    window = make_window()
    open_demo(window, clip)
    window.set_settings(TranscribeSettings(num_speakers=3, chunk_seconds=10))  # four voices left to itself
    assert window.transcribe()
    wait_until(lambda: not window.session.busy, timeout=300)
    assert {u.speaker for u in window.model.utterances} == {"S1", "S2", "S3"}
    engine = window.session.runner.worker.engine
    assert "--chunk-seconds\x0010" in Path(f"/proc/{engine.pid}/cmdline").read_bytes().decode()
    chunks = window.model.meta.chunks
    assert len(chunks) >= 4 and all(c.end - c.start <= 10.5 for c in chunks)
    with server("--diarizer", "none") as remote:  # a server that finds no speakers on its own
        window.set_settings(TranscribeSettings(run_on="server", server_url=remote.url, num_speakers=2))
        assert window.transcribe()
        wait_until(lambda: not window.session.busy, timeout=300)
        assert {u.speaker for u in window.model.utterances} == {"S1", "S2"}
        assert window.model.meta.model == f"faster-whisper tiny.en at {remote.url}"


def test_settings_a_server_holds_are_greyed_for_a_remote_run_and_say_why(qtbot):
    # catches: a model or chunk size shown as changeable on a server that ignores it
    from app.remote_settings import SERVER_HOLDS
    from app.widgets.settings_dialog import SettingsDialog

    dialog = SettingsDialog(TranscribeSettings())
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.rows["model"].isEnabled() and dialog.rows["chunk_seconds"].isEnabled()
    qtbot.mouseClick(dialog.run_on.server, Qt.MouseButton.LeftButton)
    for name in ("model", "device", "chunk_seconds", "quality", "context"):
        assert not dialog.rows[name].isEnabled() and dialog.rows[name].toolTip() == SERVER_HOLDS, name
    for name in ("language", "diarizer", "num_speakers", "min_speakers", "max_speakers"):
        assert dialog.rows[name].isEnabled(), name
    assert not dialog.backend.isEnabled()
    qtbot.mouseClick(dialog.run_on.local, Qt.MouseButton.LeftButton)
    assert dialog.rows["model"].isEnabled() and dialog.backend.isEnabled()
