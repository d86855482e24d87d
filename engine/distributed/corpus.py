"""Many files end to end on a Ray cluster: one global chunk queue, each file finished as it completes.

`CorpusRunner(pipeline, backend, options, cluster)` uses `pipeline` (built on the driver; its
model is never loaded there) for loading, VAD, chunk planning, speakers and stitching, and a
pool of `ChunkWorker` actors for inference. `run(paths, on_file, on_progress, cancel)` prepares
the files one by one, puts each file's audio into Ray's object store and queues its chunks while
earlier files already decode (the next file is read only while fewer chunks wait than the
workers hold in flight, so memory follows the cluster's size, not the corpus's); as soon as a
file's last chunk is back, its speakers and stitching run (through `ReplayBackend`, so the
transcript is exactly the single-process pipeline's) in a finishing thread, one file at a time,
while the workers are kept busy, and `on_file(FileOutcome)` gets it there (every `on_file` call
comes from that one thread). A file that cannot be read, or whose chunk failed every retry, gets
an outcome with the error; the others go on. Progress goes to `on_progress` as one INFER report
over all files (seconds of audio decoded of seconds queued). `cancel` raises `Cancelled` after
in-flight calls are cancelled; workers the runner started are stopped in every case.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.backends.base import Backend
from engine.distributed.cluster import WorkerHandle, start_workers, stop_workers
from engine.distributed.config import ClusterConfig
from engine.distributed.dispatch import ChunkDone, Dispatcher, Event
from engine.distributed.queue import ChunkQueue, Job
from engine.errors import Cancelled, MurmurError
from engine.types import Chunk, ChunkResult, Progress, Recording, Stage, Transcript

ProgressCallback = Callable[[Progress], None]


@dataclass(frozen=True, slots=True)
class FileOutcome:
    path: Path
    transcript: Transcript | None  # None when the file failed
    error: str | None = None
    seconds: float = 0.0  # from the start of the run until the transcript was ready


@dataclass(frozen=True, slots=True)
class CorpusResult:
    outcomes: tuple[FileOutcome, ...]  # in the order of the paths
    workers: int  # workers started
    workers_lost: int = 0  # workers whose process died during the run
    chunks_retried: int = 0  # chunks sent again after a failure


class ReplayBackend:
    """A backend whose chunk results were computed elsewhere: it yields them, in chunk order."""

    def __init__(self, like: Backend, results: Sequence[ChunkResult]) -> None:
        self._like = like
        self._results = sorted(results, key=lambda r: r.chunk.index)
        self.name = like.name
        self.sample_rate = like.sample_rate
        self.default_chunk_seconds = like.default_chunk_seconds
        self.max_chunk_seconds = like.max_chunk_seconds
        self.labels_speakers = like.labels_speakers

    def describe(self) -> str:
        return self._like.describe()

    def transcribe(
        self, recording: Recording, chunks: Sequence[Chunk], cancel: threading.Event | None = None
    ) -> Iterator[ChunkResult]:
        yield from self._results


@dataclass(slots=True, eq=False)
class _File:
    path: Path
    prepared: Any  # engine.pipeline.Prepared
    results: list[ChunkResult] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return len(self.results) == len(self.prepared.chunks)


class CorpusRunner:
    def __init__(
        self,
        pipeline: Any,  # engine.pipeline.Pipeline
        backend: str,
        options: dict[str, Any],
        cluster: ClusterConfig,
        batch_size: int | None = None,  # chunks per call; None: the backend's batch size
    ) -> None:
        self.pipeline = pipeline
        self.backend = backend
        self.options = options
        self.cluster = cluster
        config = getattr(pipeline.backend, "config", None)
        given = getattr(config, "batch_size", 8)
        self.batch_size = batch_size or (int(given) if given is not None else 16)  # None: the engine's limit

    def run(
        self,
        paths: Sequence[Path],
        on_file: Callable[[FileOutcome], None] | None = None,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        workers: list[WorkerHandle] | None = None,
    ) -> CorpusResult:
        """Transcribe `paths` (see the module docstring) on `workers`, or on workers started now.

        Workers given by the caller stay the caller's to stop; workers started here are stopped.
        """
        own = workers is None
        pool = start_workers(self.cluster, self.backend, self.options) if own else list(workers or ())
        try:
            run = _Run(self, pool, on_file, on_progress, cancel)
            outcomes = run.run(paths)
            d = run.dispatcher
            return CorpusResult(tuple(outcomes), len(pool), d.workers_lost, d.chunks_retried)
        finally:
            if own:
                stop_workers(pool)


class _Run:
    """The state of one corpus run (files in progress, audio refs, progress counters)."""

    def __init__(
        self,
        runner: CorpusRunner,
        workers: list[WorkerHandle],
        on_file: Callable[[FileOutcome], None] | None,
        on_progress: ProgressCallback | None,
        cancel: threading.Event | None,
    ) -> None:
        cfg = runner.cluster
        self.pipeline = runner.pipeline
        self.queue = ChunkQueue(cfg.order, cfg.max_retries)
        self.dispatcher = Dispatcher(workers, self.queue, runner.batch_size, cfg.calls_in_flight, cancel)
        self.on_file = on_file or (lambda outcome: None)
        self.report = on_progress or (lambda p: None)
        self.cancel = cancel
        self.files: dict[Hashable, _File] = {}
        self.audio: dict[Hashable, Any] = {}
        self.outcomes: dict[Hashable, FileOutcome] = {}
        self.started = time.perf_counter()
        self.seconds_total = self.seconds_done = 0.0
        self.chunks_total = self.chunks_done = 0
        self.planned = 0
        # chunks queued beyond those in flight before the next file is read: bounds the driver's memory
        self.lookahead = cfg.calls_in_flight * runner.batch_size * max(len(workers), 1)
        # speakers, stitching and `on_file` run here, one file at a time, while dispatch goes on
        self.finisher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="murmur-finish")
        self.finishing: list[Future[None]] = []

    def run(self, paths: Sequence[Path]) -> list[FileOutcome]:
        import ray

        try:
            for key, path in enumerate(paths):
                while len(self.queue) >= self.lookahead:  # files not needed yet stay on disk
                    self._handle(self.dispatcher.step(self.audio, self.dispatcher.poll))
                self._prepare(key, Path(path), ray)
                self.planned += 1
                self._handle(self.dispatcher.step(self.audio, 0.0))
            while self.dispatcher.busy:
                self._handle(self.dispatcher.step(self.audio, self.dispatcher.poll))
            for future in self.finishing:
                future.result()  # a cancel or a programming error in a finisher surfaces here
        finally:
            self.finisher.shutdown(wait=True, cancel_futures=True)
        return [self.outcomes[key] for key in range(len(paths))]

    def _prepare(self, key: int, path: Path, ray: Any) -> None:
        try:
            prepared = self.pipeline.prepare(path, None, self.cancel)
        except Cancelled:
            raise
        except (MurmurError, ValueError, OSError) as exc:
            self._later(self._done, key, FileOutcome(path, None, str(exc), self._elapsed()))
            return
        self.files[key] = _File(path, prepared)
        self.audio[key] = ray.put(prepared.recording.samples)
        self.queue.put(Job(key, chunk) for chunk in prepared.chunks)
        self.seconds_total += sum(c.duration for c in prepared.chunks)
        self.chunks_total += len(prepared.chunks)
        self._progress(None)
        if not prepared.chunks:
            self._later(self._finish, key, self._take(key))

    def _handle(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, ChunkDone):
                file = self.files[event.file]
                file.results.append(event.result)
                self.seconds_done += event.result.chunk.duration
                self.chunks_done += 1
                self._progress(event.result)
                if file.complete:
                    self._later(self._finish, event.file, self._take(event.file))
            else:
                file = self._take(event.file)
                outcome = FileOutcome(file.path, None, event.message, self._elapsed())
                self._later(self._done, event.file, outcome)

    def _take(self, key: Hashable) -> _File:
        """A file leaves the run: its audio may leave the object store now."""
        self.audio.pop(key, None)
        return self.files.pop(key)

    def _later(self, work: Callable[..., None], *args: Any) -> None:
        self.finishing.append(self.finisher.submit(work, *args))

    def _finish(self, key: Hashable, file: _File) -> None:
        from engine.pipeline import Pipeline

        p = self.pipeline
        replay = ReplayBackend(p.backend, file.results)
        finisher = Pipeline(replay, p.config, p.detector, p.diarizer)
        try:
            transcript = finisher.transcribe(file.prepared, None, self.cancel)
        except Cancelled:
            raise
        except (MurmurError, ValueError) as exc:
            self._done(key, FileOutcome(file.path, None, str(exc), self._elapsed()))
            return
        self._done(key, FileOutcome(file.path, transcript, None, self._elapsed()))

    def _done(self, key: Hashable, outcome: FileOutcome) -> None:
        self.outcomes[key] = outcome
        self.on_file(outcome)

    def _progress(self, partial: ChunkResult | None) -> None:
        workers = len(self.dispatcher.workers)
        detail = (
            f"{self.chunks_done}/{self.chunks_total} chunks, {self.planned} files planned, "
            f"{workers} worker{'s' * (workers != 1)}"
        )
        self.report(Progress(Stage.INFER, self.seconds_done, self.seconds_total, detail, partial))

    def _elapsed(self) -> float:
        return time.perf_counter() - self.started
