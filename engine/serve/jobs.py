"""Jobs: one uploaded recording each, run through the server's pipeline in its own thread.

`JobRegistry.submit(path, options)` starts a `Job` at once (each job's load, VAD and chunking run
on its own CPU thread; decoding happens in the shared batch) unless `max_jobs` are already active,
which is `QueueFull` (the server answers 429). A job publishes an append-only list of events —
`murmur.job`, `murmur.progress` (stage, done, total, ETA), `transcript.text.delta` (the lines that
became final, see `lines.py`), then `transcript.text.done` or `error` — that any number of readers
follow (`Job.events_from`). `Job.cancel()` stops it; the uploaded file is deleted when it ends.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import AudioDecodeError, Cancelled, MurmurError
from engine.pipeline import Pipeline
from engine.progress import EtaTracker
from engine.serve.formats import verbose
from engine.serve.known_speakers import KnownSpeakers
from engine.serve.length import client_text, decode_failure
from engine.serve.lines import LineStream
from engine.serve.notices import notices
from engine.types import DecodeChoices, Progress, Stage, Transcript

log = logging.getLogger(__name__)


MAX_SPEAKERS = 32  # the most speakers a request may ask for


class QueueFull(Exception):
    """As many jobs as the server takes are already active."""


@dataclass(frozen=True, slots=True)
class JobOptions:
    """What a client may choose per job (None: the server's own setting)."""

    diarize: bool | None = None  # False: no speakers
    diarizer: str | None = None  # embedded, pyannote or none
    num_speakers: int | None = None  # the number of speakers; overrides the bounds below
    min_speakers: int | None = None
    max_speakers: int | None = None
    decoding: DecodeChoices = field(default_factory=DecodeChoices)  # language, prompt, temperature, task
    filename: str = ""  # the name the client gave its file: the one its transcript and messages show
    known_speakers: KnownSpeakers | None = None  # known_speaker_names[] + _references[]: named when heard

    def __post_init__(self) -> None:
        for name in ("num_speakers", "min_speakers", "max_speakers"):
            count = getattr(self, name)
            if count is not None and not 1 <= count <= MAX_SPEAKERS:
                raise ValueError(f"{name} must be between 1 and {MAX_SPEAKERS}")


class Job:
    def __init__(self, job_id: str, duration: float) -> None:
        self.id, self.duration = job_id, duration
        self.cancel_event = threading.Event()
        self.state = "queued"  # queued → running → done | failed | cancelled
        self.transcript: Transcript | None = None
        self.warnings: list[str] = []  # what the CLI would warn about the file, in the client's words
        self.submitted = time.monotonic()
        self.finished: float | None = None
        self._events: list[dict[str, Any]] = []
        self._changed = threading.Condition()

    @property
    def over(self) -> bool:
        return self.state in ("done", "failed", "cancelled")

    def cancel(self) -> None:
        self.cancel_event.set()

    def emit(self, event: dict[str, Any]) -> None:
        with self._changed:
            self._events.append(event)
            self._changed.notify_all()

    def events_from(self, start: int, timeout: float = 0.0) -> list[dict[str, Any]]:
        """Events from index `start` on, waiting up to `timeout` s for one when there is none yet."""
        with self._changed:
            if len(self._events) <= start and not self.over and timeout > 0:
                self._changed.wait(timeout)
            return self._events[start:]

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        self.emit({"type": "murmur.warning", "message": message})

    def end(self, state: str, event: dict[str, Any]) -> None:
        with self._changed:
            self.state, self.finished = state, time.monotonic()
            self._events.append(event)
            self._changed.notify_all()


class JobRegistry:
    """Active jobs, at most `max_jobs` at once; each runs `make_pipeline(options)` on its file."""

    def __init__(self, make_pipeline: Callable[[JobOptions], Pipeline], max_jobs: int) -> None:
        if max_jobs < 1:
            raise ValueError("max queued jobs must be at least 1")
        self.make_pipeline, self.max_jobs = make_pipeline, max_jobs
        self.jobs: dict[str, Job] = {}
        self.counts = {"done": 0, "failed": 0, "cancelled": 0}
        self.audio_seconds = 0.0  # audio transcribed by finished jobs
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max_jobs, thread_name_prefix="murmur-job")

    @property
    def active(self) -> int:
        with self._lock:
            return len(self.jobs)

    def submit(self, path: Path, duration: float, options: JobOptions) -> Job:
        """Start a job on `path` (deleted when the job ends); `QueueFull` when no room is left."""
        with self._lock:
            if len(self.jobs) >= self.max_jobs:
                raise QueueFull(f"the server is busy with {len(self.jobs)} jobs; try again shortly")
            job = Job(f"job-{next(self._ids)}", duration)
            self.jobs[job.id] = job
        self._pool.submit(self._run, job, path, options)
        return job

    def shutdown(self) -> None:
        with self._lock:
            jobs = list(self.jobs.values())
        for job in jobs:
            job.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _run(self, job: Job, path: Path, options: JobOptions) -> None:
        job.state = "running"
        try:
            pipeline = self.make_pipeline(options)
            job.emit({"type": "murmur.job", "id": job.id, "duration": job.duration,
                      "model": pipeline.backend.describe()})  # fmt: skip
            with notices(lambda text: job.warn(client_text(text, path, options.filename))):
                transcript = _transcribe(pipeline, path, job)
            transcript = dataclasses.replace(transcript, source=options.filename or None)  # not our path
            job.transcript = transcript
            job.end("done", {"type": "transcript.text.done", "text": transcript.text, **verbose(transcript)})
        except Cancelled:
            job.end("cancelled", _error_event("the job was cancelled", "cancelled"))
        except (AudioDecodeError, ValueError, MurmurError) as exc:
            job.end("failed", _failure(exc, path, options.filename))
        except Exception:  # a bug must not take the server or other jobs down
            log.exception("job %s failed", job.id)
            job.end("failed", _error_event("the server failed on this file (see its log)", "server_error"))
        finally:
            path.unlink(missing_ok=True)
            with self._lock:
                self.jobs.pop(job.id, None)
                self.counts[job.state] = self.counts.get(job.state, 0) + 1
                if job.state == "done":
                    self.audio_seconds += job.duration


def _transcribe(pipeline: Pipeline, path: Path, job: Job) -> Transcript:
    eta = EtaTracker()
    lines: list[LineStream] = []

    def report(progress: Progress) -> None:
        seconds = eta.update(progress)
        job.emit({
            "type": "murmur.progress", "stage": progress.stage.value, "done": progress.completed,
            "total": progress.total, "eta_seconds": None if seconds is None else round(seconds, 1),
            "detail": progress.detail,
        })  # fmt: skip
        if progress.stage is Stage.INFER and progress.partial is not None and lines:
            new = lines[0].feed(progress.partial)
            if new:
                job.emit({"type": "transcript.text.delta", "delta": " ".join(li["text"] for li in new),
                          "lines": new})  # fmt: skip

    prepared = pipeline.prepare(path, report, job.cancel_event)
    lines.append(LineStream(prepared.chunks, pipeline.config.stitch))
    return pipeline.transcribe(prepared, report, job.cancel_event)


def _failure(exc: Exception, path: Path, name: str) -> dict[str, Any]:
    """The error event of a job that failed on its file, in the client's words (never our paths)."""
    if isinstance(exc, AudioDecodeError):
        return _error_event(decode_failure(exc, path, name), "invalid_request_error")
    kind = "invalid_request_error" if isinstance(exc, ValueError) else "server_error"
    return _error_event(client_text(str(exc), path, name), kind)


def _error_event(message: str, kind: str) -> dict[str, Any]:
    return {"type": "error", "error": {"message": message, "type": kind}}
