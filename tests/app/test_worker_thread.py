"""The worker thread: jobs run off the GUI thread, report in order, and fail without dying."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from qt_helpers import DEMO, stepped_back, wait_until

from app.jobs import LoadJob, TranscribeJob
from app.settings import TranscribeSettings
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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a niceness per thread is Linux's")
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
    import sys

    controller = RunController()
    try:
        assert sys.getswitchinterval() == pytest.approx(0.001)
    finally:
        controller.shutdown()


def test_the_voice_detectors_runtime_is_loaded_with_the_window_not_at_the_first_file():
    """Importing onnxruntime holds the interpreter 60–90 ms in one C call: on the worker thread, as
    the first file opened, it froze the window while the user worked."""
    import subprocess
    import sys

    code = (
        "import sys; from PySide6.QtWidgets import QApplication; qt = QApplication([]); "
        "from app.worker import RunController; before = 'onnxruntime' in sys.modules; "
        "c = RunController(); print(before, 'onnxruntime' in sys.modules); c.shutdown()"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.split() == ["False", "True"], out.stderr[-2000:]
