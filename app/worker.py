"""The engine, run off the GUI thread: a worker QObject on a QThread, driven by jobs.

`RunController` (GUI thread) owns a `TranscriptionWorker` moved to its own `QThread`. Jobs are
frozen records sent through a queued signal: `LoadJob` decodes a file, builds its envelope pyramid
(signal `audio_loaded`) and finds speech and chunks (`prepared`; the speech a project or the live
recording knows is not looked for again, only its chunks planned); `TranscribeJob` runs inference
on the loaded audio with the given settings (`partial` per finished chunk, then `finished`);
`RangeJob` runs the pipeline built from its own settings on one time range of the loaded audio
(`engine.retranscribe.transcribe_range`, outcome `range_done`); `EngineJob` starts the engine
process again (`engine_ready`). Every job reports `progress` (throttled to about 20 a second), then
`idle`, then exactly one outcome: `prepared` (load), `finished` (transcribe), `range_done` (range)
or `engine_ready`, `failed(title, message)` or `cancelled`. The worker tells its end once
(`ended`); the controller emits `idle` and the outcome from the window's thread, one right after
the other, so no key or timer of the window runs between them, then `settled`: a job started when
the window sees the worker let go never receives the last job's outcome.

Inference never runs in this process: transcribe and range jobs speak to a `murmur serve`, the
app's own engine process (`app.engine_process`, started by the first run and kept while the
settings a server holds stay the same) or a remote server, through the same client
(`app.remote_settings.run_pipeline`). Decoding and the plan drawn on the waveform (speech and
chunks, found here by a model-less pipeline whose last instance is reused while the settings stay
the same) are the only local work. Transcribe and range jobs ask the server first
(`check_ready()`), so a server that is down is reported before any audio is prepared again. An
engine process that dies mid-run fails the run with the title `ENGINE_STOPPED` and the reason
("killed by signal 9"); the window offers to restart it. `cancel()` sets a `threading.Event` that
closes the request (the server cancels the job) and that local work checks between units. The
worker thread steps back from the window (`app.background`).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.background import preload_runtime, step_back
from app.engine_process import EngineError, EngineProcess, EngineStopped
from app.envelope import EnvelopePyramid
from app.jobs import EngineJob, LoadedAudio, LoadJob, RangeJob, TranscribeJob
from app.remote_settings import run_pipeline
from app.settings import TranscribeSettings, engine_arguments, engine_flags
from engine.errors import (
    AudioDecodeError,
    Cancelled,
    ModelLoadError,
    ModelOutputError,
    MurmurError,
    OutOfMemoryError,
    ServerError,
)
from engine.types import Progress, Stage

log = logging.getLogger(__name__)
PROGRESS_INTERVAL = 0.05  # seconds between progress signals within one stage
SWITCH_INTERVAL = 0.001  # seconds a thread holds the interpreter before another may take it
ENGINE_STOPPED = "The engine stopped"

ERROR_TITLES: dict[type[Exception], str] = {
    EngineStopped: ENGINE_STOPPED,
    EngineError: "The engine could not start",
    AudioDecodeError: "Cannot open this file",
    ModelLoadError: "The model could not be loaded",
    ModelOutputError: "The model's output could not be read",
    OutOfMemoryError: "Out of memory",
}


def error_message(exc: BaseException) -> tuple[str, str]:
    """A dialog title and message for a failure."""
    for kind, title in ERROR_TITLES.items():
        if isinstance(exc, kind):
            return title, str(exc)
    if isinstance(exc, MemoryError):
        return "Out of memory", "The computer ran out of memory. Try a smaller batch size or chunk size."
    if isinstance(exc, MurmurError):
        return "Transcription failed", str(exc)
    if isinstance(exc, ValueError):
        return "These settings cannot be used", str(exc)
    return "Unexpected error", f"{type(exc).__name__}: {exc}"


class TranscriptionWorker(QObject):
    progress = Signal(object)  # engine.types.Progress
    audio_loaded = Signal(object)  # LoadedAudio
    prepared = Signal(object)  # engine.pipeline.Prepared
    partial = Signal(object)  # engine.types.ChunkResult
    finished = Signal(object)  # engine.types.Transcript
    range_done = Signal(object)  # engine.retranscribe.RangeResult
    engine_ready = Signal(str)  # a sentence saying the engine runs again
    failed = Signal(str, str)
    cancelled = Signal()
    idle = Signal()
    ended = Signal(str, object)  # the outcome's signal name and arguments (`RunController` tells them)

    def __init__(self, cancel: threading.Event) -> None:
        super().__init__()
        self._cancel = cancel
        self.engine = EngineProcess()  # started by the first run on this computer
        self._pipeline: Any = None
        self._pipeline_key = ""
        self._prepared: Any = None
        self._path: Path | None = None
        self._stream: int | None = None  # the audio stream of `_path` that was loaded
        self._last_emit = 0.0
        self._last_stage: Stage | None = None
        self.thread_id: int | None = None  # the worker thread's own id, once it ran a job (`step_back`)

    @Slot(object)
    def run(self, job: LoadJob | TranscribeJob | RangeJob | EngineJob) -> None:
        outcome: tuple[str, tuple[Any, ...]]
        if self.thread_id is None:
            self.thread_id = step_back()
        self._last_stage = None  # a job's first report is shown, whatever stage the last job ended in
        try:
            if isinstance(job, LoadJob):
                outcome = ("prepared", (self._load(job),))
            elif isinstance(job, RangeJob):
                outcome = ("range_done", (self._range(job),))
            elif isinstance(job, EngineJob):
                outcome = ("engine_ready", (self._restart(job),))
            else:
                outcome = ("finished", (self._transcribe(job),))
        except Cancelled:
            outcome = ("cancelled", ())
        except Exception as exc:  # a failure must reach the user, never kill the thread
            if not isinstance(exc, MurmurError | ValueError | MemoryError):
                log.exception("unexpected failure in a background job")
            outcome = ("failed", error_message(exc))
        self.ended.emit(*outcome)  # one event: idle and the outcome reach the window together

    def _pipeline_for(self, settings: TranscribeSettings, stream: int | None) -> Any:
        """The pipeline that decodes and plans (speech and chunks) here: no model is loaded."""
        from engine.pipeline import Pipeline

        backend, config, options = engine_arguments(settings)
        config = replace(config, audio_stream=stream)
        remote = [settings.run_on, settings.server_url, settings.server_key]
        key = json.dumps([backend, repr(config), sorted((k, repr(v)) for k, v in options.items()), remote])
        if key != self._pipeline_key:
            on_server = settings.run_on == "server"  # its audio is decoded at the upload's rate, unplanned
            pipeline = run_pipeline(settings, self.engine, stream) if on_server else Pipeline.create(
                backend, config, **options)  # fmt: skip
            self._pipeline, self._pipeline_key = pipeline, key
        return self._pipeline

    def _runner(self, settings: TranscribeSettings) -> Any:
        """The pipeline that transcribes: the server's, or the engine process's (started here)."""
        if settings.run_on == "local" and not self.engine.running():
            self._report(Progress(Stage.LOAD, 0, 1, "starting the engine"))
        runner = run_pipeline(settings, self.engine, self._stream, self._cancel)
        runner.check_ready()  # a server that is down fails here, before voice activity is found again
        return runner

    def _watched(self, settings: TranscribeSettings, work: Any) -> Any:
        """`work()`, with a lost connection to an engine process that died told as what it is."""
        try:
            return work()
        except ServerError as exc:
            reason = self.engine.stopped() if settings.run_on == "local" else None
            if reason is None:
                raise
            raise EngineStopped(f"The engine stopped unexpectedly ({reason}) and this run ended. "
                                "Restart the engine to go on.") from exc  # fmt: skip

    def _restart(self, job: EngineJob) -> str:
        self._report(Progress(Stage.LOAD, 0, 1, "starting the engine"))
        self.engine.stop()
        self.engine.ensure(engine_flags(job.settings), self._cancel)
        return f"The engine is running again (process {self.engine.pid})"

    def _load(self, job: LoadJob) -> Any:
        from engine.pipeline import Prepared

        pipeline = self._pipeline_for(job.settings, job.stream)
        recording = pipeline.load(job.path, self._report, self._cancel)
        envelope = EnvelopePyramid.build(recording.samples, recording.sample_rate)
        self._prepared, self._path, self._stream = None, job.path, job.stream  # replaced only now
        self.audio_loaded.emit(LoadedAudio(job.path, recording, envelope, job.stream))
        if job.speech is None:
            prepared = pipeline.prepare(recording, self._report, self._cancel)
        elif job.chunks:  # a project's plan
            prepared = Prepared(recording, job.speech, job.chunks)
        else:  # the speech a live recording found: only its chunks to plan
            prepared = pipeline.plan(recording, job.speech)
        self._prepared = (self._pipeline_key, prepared)
        return prepared

    def _transcribe(self, job: TranscribeJob) -> Any:
        if self._path is None:
            raise AudioDecodeError("open a recording before transcribing")
        runner = self._runner(job.settings)
        pipeline = self._pipeline_for(job.settings, self._stream)
        key, prepared = self._prepared or ("", None)
        if prepared is None or key != self._pipeline_key:
            recording = prepared.recording if prepared is not None else None
            if recording is None or recording.sample_rate != pipeline.backend.sample_rate:
                recording = pipeline.load(self._path, self._report, self._cancel)
                envelope = EnvelopePyramid.build(recording.samples, recording.sample_rate)
                self.audio_loaded.emit(LoadedAudio(self._path, recording, envelope, self._stream))
            prepared = pipeline.prepare(recording, self._report, self._cancel)
            self._prepared = (self._pipeline_key, prepared)
            self.prepared.emit(prepared)
        return self._watched(job.settings, lambda: runner.transcribe(prepared, self._report, self._cancel))

    def _range(self, job: RangeJob) -> Any:
        from engine.retranscribe import transcribe_range

        if self._path is None:
            raise AudioDecodeError("open a recording before transcribing")
        runner = self._runner(job.settings)
        _, prepared = self._prepared or ("", None)
        recording = prepared.recording if prepared is not None else None
        if recording is None:
            recording = runner.load(self._path, self._report, self._cancel)
        return self._watched(job.settings, lambda: transcribe_range(
            runner, recording, job.start, job.end, job.existing, self._report, self._cancel))  # fmt: skip

    def _report(self, progress: Progress) -> None:
        if progress.partial is not None:
            self.partial.emit(progress.partial)
        now = time.monotonic()
        fresh_stage = progress.stage != self._last_stage
        if fresh_stage or progress.partial is not None or now - self._last_emit >= PROGRESS_INTERVAL:
            self._last_emit, self._last_stage = now, progress.stage
            self.progress.emit(progress)


class RunController(QObject):
    """Starts jobs on the worker thread and forwards its signals; one job at a time. The window
    waits for the worker's turn at the interpreter at nearly every call into Qt: turns of
    `SWITCH_INTERVAL`, not Python's 5 ms (docs/app.md, responsiveness)."""

    submit = Signal(object)
    settled = Signal()  # a job's outcome was handled: the next job may start

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        sys.setswitchinterval(SWITCH_INTERVAL)
        preload_runtime()
        self._cancel = threading.Event()
        self._thread = QThread()
        self._thread.setObjectName("murmur-engine")
        self.worker = TranscriptionWorker(self._cancel)
        self.worker.moveToThread(self._thread)
        self.submit.connect(self.worker.run)
        self.worker.ended.connect(self._on_ended)  # queued: delivered on the window's thread
        self._busy = False
        self._thread.start()

    @property
    def busy(self) -> bool:
        return self._busy

    def start(self, job: LoadJob | TranscribeJob | RangeJob | EngineJob) -> bool:
        """Queue `job`; False (and nothing happens) while another job runs."""
        if self._busy:
            return False
        self._busy = True
        self._cancel.clear()
        self.submit.emit(job)
        return True

    def cancel(self) -> None:
        self._cancel.set()

    def shutdown(self, timeout_ms: int = 30000) -> None:
        """Cancel any job, stop the engine process and the thread (waits for the current unit of
        work)."""
        self._cancel.set()
        self.worker.engine.stop()
        self._thread.quit()
        self._thread.wait(timeout_ms)

    @Slot(str, object)
    def _on_ended(self, outcome: str, args: tuple[Any, ...]) -> None:
        """The job's end as one step: not busy, `idle`, the outcome, then `settled` (those who start
        a job when the last one ended start it only now, after its outcome)."""
        self._busy = False
        self.worker.idle.emit()
        getattr(self.worker, outcome).emit(*args)
        self.settled.emit()
