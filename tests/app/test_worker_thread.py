"""The worker thread: jobs run off the GUI thread, report in order, and fail without dying."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtGui import QUndoStack
from qt_helpers import DEMO, LINUX, preempt_after, stepped_back, wait_until

from app.jobs import LoadJob, TranscribeJob
from app.session import Session
from app.settings import TranscribeSettings
from app.transcript_model import TranscriptModel
from app.worker import RunController, error_message
from engine.errors import AudioDecodeError, ModelLoadError


def record(controller: RunController) -> list[tuple[str, object]]:
    events: list[tuple[str, object]] = []
    w = controller.worker
    for name in ("audio_loaded", "prepared", "finished", "cancelled", "idle"):
        getattr(w, name).connect(lambda *args, n=name: events.append((n, args)))
    w.failed.connect(lambda title, text: events.append(("failed", (title, text))))
    w.progress.connect(lambda p: events.append(("progress", threading.current_thread())))
    return events


def test_loading_reports_progress_then_audio_then_the_plan(qapp):
    controller = RunController()
    events = record(controller)
    try:
        assert controller.start(LoadJob(DEMO, TranscribeSettings()))
        assert not controller.start(LoadJob(DEMO, TranscribeSettings())), "a second job must wait"
        wait_until(lambda: any(n == "prepared" for n, _ in events))
        names = [n for n, _ in events if n != "progress"]
        assert names == ["audio_loaded", "idle", "prepared"]
        loaded = events[[n for n, _ in events].index("audio_loaded")][1][0]
        assert 120 < loaded.recording.duration < 130 and loaded.envelope.duration == loaded.recording.duration
        assert any(n == "progress" for n, _ in events) and not controller.busy
    finally:
        controller.shutdown()


class Window(QObject):
    """Lives on the window's thread: what it sees of a job's end, and what it does next."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    @Slot()
    def idle(self) -> None:  # the worker let go: a key pressed now (F5) runs right after
        self.seen.append("idle")
        QTimer.singleShot(0, lambda: self.seen.append("the next key"))

    @Slot(object)
    def prepared(self, _prepared: object) -> None:
        self.seen.append("outcome")


def test_no_key_of_the_window_runs_between_the_worker_letting_go_and_its_outcome(qapp):
    # catches: idle and the outcome told as two events from the worker's thread. Stepped back, on
    # two busy cores, the thread lost the CPU between them; Esc then F5 started a run that took the
    # cancelled run's outcome for its own and dropped every line the user had fixed
    controller = RunController()
    window = Window()
    controller.worker.idle.connect(window.idle)
    controller.worker.prepared.connect(window.prepared)
    preempt_after(controller.worker.idle)  # the thread that tells idle loses the CPU there
    try:
        assert controller.start(LoadJob(DEMO, TranscribeSettings()))
        wait_until(lambda: "the next key" in window.seen, timeout=120)
        assert window.seen == ["idle", "outcome", "the next key"]
    finally:
        controller.shutdown()


def test_the_session_says_it_is_free_only_once_the_last_jobs_outcome_is_in(qapp):
    # catches: "free" told at idle, before the outcome. A recording's final run and a file opened
    # from the command line start when the session is free: they started before the plan (or the
    # failure) of the job before them was in, and that outcome was then taken for theirs
    session = Session(TranscriptModel(QUndoStack()))
    free: list[object] = []
    session.busy_changed.connect(lambda busy: busy or free.append(session.prepared))
    try:
        assert session.open_audio(DEMO, TranscribeSettings())
        wait_until(lambda: free, timeout=120)
        assert free[0] is not None and free[0].chunks, "the session was free before the plan was in"
        assert session.open_audio(DEMO, TranscribeSettings())
        session.runner.settled.emit()  # as when a handler of the outcome started the next job
        assert session.busy and len(free) == 1, "said free while the next job ran"
        wait_until(lambda: len(free) == 2, timeout=120)
        assert session.open_audio(DEMO, TranscribeSettings())
        session.cancel()
        assert session.cancelling
        wait_until(lambda: len(free) == 3, timeout=120)
        assert not session.cancelling, "still cancelling after the job let go"
    finally:
        session.shutdown()


@pytest.mark.skipif(not LINUX, reason="a niceness per thread is Linux's")
def test_the_worker_thread_yields_the_cpu_to_the_window_as_the_engine_process_does(qapp, tmp_path: Path):
    # catches: the worker decoding and finding speech at the window's own priority (after Stop, on
    # two cores, the window waited for it while the live lines caught up); the window stepped back
    # instead of the worker
    window = os.getpriority(os.PRIO_PROCESS, os.getpid())
    controller = RunController()
    events = record(controller)
    try:
        controller.start(LoadJob(tmp_path / "missing.flac", TranscribeSettings()))
        wait_until(lambda: any(n == "failed" for n, _ in events))
        worker = controller.worker.thread_id
        assert worker is not None and worker != threading.get_native_id()
        assert os.getpriority(os.PRIO_PROCESS, worker) == stepped_back()
        assert os.getpriority(os.PRIO_PROCESS, os.getpid()) == window
    finally:
        controller.shutdown()


def test_a_corrupt_file_fails_with_a_clear_message_and_the_thread_survives(qapp, tmp_path: Path):
    broken = tmp_path / "broken.flac"
    broken.write_bytes(b"fLaC" + bytes(range(256)) * 8)
    controller = RunController()
    events = record(controller)
    try:
        controller.start(LoadJob(broken, TranscribeSettings()))
        wait_until(lambda: any(n == "failed" for n, _ in events))
        title, text = next(args for n, args in events if n == "failed")
        assert title == "Cannot open this file" and "broken.flac" in text
        controller.start(TranscribeJob(TranscribeSettings()))  # nothing was loaded: refused, not a crash
        wait_until(lambda: [n for n, _ in events].count("failed") == 2)
    finally:
        controller.shutdown()


def test_error_messages_name_the_problem():
    assert error_message(ModelLoadError("x"))[0] == "The model could not be loaded"
    assert error_message(AudioDecodeError("y")) == ("Cannot open this file", "y")
    assert error_message(MemoryError())[0] == "Out of memory"
    assert error_message(ValueError("chunk too big"))[0] == "These settings cannot be used"
    assert error_message(RuntimeError("boom"))[0] == "Unexpected error"


def test_the_window_and_its_worker_take_turns_at_the_interpreter_every_millisecond(qapp):
    """The window waits for the worker's turn at nearly every call into Qt (docs/app.md): Python's
    default 5 ms turn doubled the window's worst stall while a file was decoded and planned."""
    controller = RunController()
    try:
        assert sys.getswitchinterval() == pytest.approx(0.001)
    finally:
        controller.shutdown()


def test_the_voice_detectors_runtime_is_loaded_with_the_window_not_at_the_first_file():
    """Importing onnxruntime holds the interpreter 60–90 ms in one C call: on the worker thread, as
    the first file opened, it froze the window while the user worked."""
    import subprocess

    code = (
        "import sys; from PySide6.QtWidgets import QApplication; qt = QApplication([]); "
        "from app.worker import RunController; before = 'onnxruntime' in sys.modules; "
        "c = RunController(); print(before, 'onnxruntime' in sys.modules); c.shutdown()"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.split() == ["False", "True"], out.stderr[-2000:]
