"""The engine, run off the GUI thread: a worker QObject on a QThread, driven by jobs.

`RunController` (GUI thread) owns a `TranscriptionWorker` moved to its own `QThread`. Jobs are
frozen records sent through a queued signal: `LoadJob` decodes a file, builds its envelope pyramid
(signal `audio_loaded`) and finds speech and chunks (`prepared`); `TranscribeJob` runs inference on
the loaded audio with the given settings (`partial` per finished chunk, then `finished`);
`RangeJob` runs the pipeline built from its own settings on one time range of the loaded audio
(`engine.retranscribe.transcribe_range`, outcome `range_done`). Every job
reports `progress` (throttled to about 20 a second), then `idle`, then exactly one outcome:
`prepared` (load), `finished` (transcribe) or `range_done` (range), `failed(title, message)` or
`cancelled`.
Transcribe and range jobs call the pipeline's `check_ready()` first, so a server that is down is
reported before any audio is prepared again. `cancel()` sets a `threading.Event` the engine checks
between units of work. The engine's
pipeline module is imported only inside jobs, and the last pipeline (with its loaded model) is
reused while the settings stay the same. Whisper on a CPU decodes one chunk per call
(`WATCHED_BATCH`) in each of its lanes, so lines arrive a chunk or two at a time and a cancel
waits for the chunk each lane is decoding at most.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.envelope import EnvelopePyramid
from app.remote_settings import remote_pipeline
from app.settings import TranscribeSettings, engine_arguments
from engine.errors import (
    AudioDecodeError,
    Cancelled,
    ModelLoadError,
    ModelOutputError,
    MurmurError,
    OutOfMemoryError,
)
from engine.types import Chunk, Progress, Recording, SpeechSegment, Stage, Utterance

log = logging.getLogger(__name__)
PROGRESS_INTERVAL = 0.05  # seconds between progress signals within one stage
WATCHED_BATCH = 1  # whisper chunks per decode call on a CPU: lines come a chunk at a time, and a
# cancel waits for one chunk per lane at most (CTranslate2 cannot stop a call); as fast as 2 here

ERROR_TITLES: dict[type[Exception], str] = {
    AudioDecodeError: "Cannot open this file",
    ModelLoadError: "The model could not be loaded",
    ModelOutputError: "The model's output could not be read",
    OutOfMemoryError: "Out of memory",
}


@dataclass(frozen=True, slots=True)
class LoadJob:
    path: Path
    settings: TranscribeSettings
    speech: tuple[SpeechSegment, ...] | None = None  # known already (from a project): skip VAD
    chunks: tuple[Chunk, ...] = ()
    stream: int | None = None  # which audio stream of the file; None: its default one


@dataclass(frozen=True, slots=True)
class TranscribeJob:
    settings: TranscribeSettings


@dataclass(frozen=True, slots=True)
class RangeJob:
    settings: TranscribeSettings
    start: float
    end: float
    existing: tuple[Utterance, ...]  # the transcript's lines, whose speakers the result keeps


@dataclass(frozen=True, slots=True, eq=False)
class LoadedAudio:
    path: Path
    recording: Recording
    envelope: EnvelopePyramid
    stream: int | None = None  # the audio stream of the file it came from; None: the default one


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
    failed = Signal(str, str)
    cancelled = Signal()
    idle = Signal()

    def __init__(self, cancel: threading.Event) -> None:
        super().__init__()
        self._cancel = cancel
        self._pipeline: Any = None
        self._pipeline_key = ""
        self._prepared: Any = None
        self._path: Path | None = None
        self._stream: int | None = None  # the audio stream of `_path` that was loaded
        self._last_emit = 0.0
        self._last_stage: Stage | None = None

    @Slot(object)
    def run(self, job: LoadJob | TranscribeJob | RangeJob) -> None:
        outcome: tuple[Any, tuple[Any, ...]]
        try:
            if isinstance(job, LoadJob):
                outcome = (self.prepared, (self._load(job),))
            elif isinstance(job, RangeJob):
                outcome = (self.range_done, (self._range(job),))
            else:
                outcome = (self.finished, (self._transcribe(job),))
        except Cancelled:
            outcome = (self.cancelled, ())
        except Exception as exc:  # a failure must reach the user, never kill the thread
            if not isinstance(exc, MurmurError | ValueError | MemoryError):
                log.exception("unexpected failure in a background job")
            outcome = (self.failed, error_message(exc))
        self.idle.emit()  # first, so handlers of the outcome may start the next job
        signal, args = outcome
        signal.emit(*args)

    def _pipeline_for(self, settings: TranscribeSettings, stream: int | None) -> Any:
        from engine.pipeline import Pipeline

        backend, config, options = engine_arguments(settings)
        if backend == "whisper":  # on a CPU, someone watches each line arrive and may press Esc
            options = {"cpu_batch_cap": WATCHED_BATCH, "ramp": True, **options}
        config = replace(config, audio_stream=stream)
        remote = [settings.run_on, settings.server_url, settings.server_key]
        key = json.dumps([backend, repr(config), sorted((k, repr(v)) for k, v in options.items()), remote])
        if key != self._pipeline_key:
            pipeline = remote_pipeline(settings, stream) or Pipeline.create(backend, config, **options)
            self._pipeline, self._pipeline_key = pipeline, key
        return self._pipeline

    def _load(self, job: LoadJob) -> Any:
        from engine.pipeline import Prepared

        pipeline = self._pipeline_for(job.settings, job.stream)
        recording = pipeline.load(job.path, self._report, self._cancel)
        envelope = EnvelopePyramid.build(recording.samples, recording.sample_rate)
        self._prepared, self._path, self._stream = None, job.path, job.stream  # replaced only now
        self.audio_loaded.emit(LoadedAudio(job.path, recording, envelope, job.stream))
        if job.speech is not None:
            prepared = Prepared(recording, job.speech, job.chunks)
        else:
            prepared = pipeline.prepare(recording, self._report, self._cancel)
        self._prepared = (self._pipeline_key, prepared)
        return prepared

    def _transcribe(self, job: TranscribeJob) -> Any:
        pipeline = self._pipeline_for(job.settings, self._stream)
        if self._path is None:
            raise AudioDecodeError("open a recording before transcribing")
        pipeline.check_ready()  # a server that is down fails here, before voice activity is found again
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
        return pipeline.transcribe(prepared, self._report, self._cancel)

    def _range(self, job: RangeJob) -> Any:
        from engine.retranscribe import transcribe_range

        if self._path is None:
            raise AudioDecodeError("open a recording before transcribing")
        main_key, main_pipeline = self._pipeline_key, self._pipeline
        try:
            pipeline = self._pipeline_for(job.settings, self._stream)
            pipeline.check_ready()
            _, prepared = self._prepared or ("", None)
            recording = prepared.recording if prepared is not None else None
            if recording is None or recording.sample_rate != pipeline.backend.sample_rate:
                recording = pipeline.load(self._path, self._report, self._cancel)
            return transcribe_range(pipeline, recording, job.start, job.end, job.existing, self._report,
                                    self._cancel)  # fmt: skip
        finally:
            if main_pipeline is not None and main_key != self._pipeline_key:
                self._pipeline, self._pipeline_key = main_pipeline, main_key  # the plan stays valid

    def _report(self, progress: Progress) -> None:
        if progress.partial is not None:
            self.partial.emit(progress.partial)
        now = time.monotonic()
        fresh_stage = progress.stage != self._last_stage
        if fresh_stage or progress.partial is not None or now - self._last_emit >= PROGRESS_INTERVAL:
            self._last_emit, self._last_stage = now, progress.stage
            self.progress.emit(progress)


class RunController(QObject):
    """Starts jobs on the worker thread and forwards its signals; one job at a time."""

    submit = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cancel = threading.Event()
        self._thread = QThread()
        self._thread.setObjectName("murmur-engine")
        self.worker = TranscriptionWorker(self._cancel)
        self.worker.moveToThread(self._thread)
        self.submit.connect(self.worker.run)
        self.worker.idle.connect(self._on_idle)
        self._busy = False
        self._thread.start()

    @property
    def busy(self) -> bool:
        return self._busy

    def start(self, job: LoadJob | TranscribeJob | RangeJob) -> bool:
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
        """Cancel any job and stop the thread (waits for the current unit of work)."""
        self._cancel.set()
        self._thread.quit()
        self._thread.wait(timeout_ms)

    @Slot()
    def _on_idle(self) -> None:
        self._busy = False
