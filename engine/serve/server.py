"""The server's state: the backend loaded once, the job registry, and (VibeVoice) the shared batch.

`Server.create(backend, options, pipeline_config, serve_config)` builds the backend and loads its
model at once (a model that cannot load is a `ModelLoadError` before anything listens). Each job
gets a `Pipeline` around the same loaded backend and voice-activity detector: for VibeVoice with
Murmur's engine that backend is a `SharedBackend`, so every job's chunks decode in one batch; for
whisper it is a `SharedWhisperBackend`, so every job's clips (first passes, repairs, gap fills) fill
the same batched faster-whisper calls (`whisper_batch`). Uploads live in a private temporary
folder that is removed on `close()`.

`Places` shares `max_queued_jobs` between jobs and uploads still arriving: a request holds a place
from before its body is read until its job starts (or it fails), so parked uploads are bounded
like running jobs.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engine.audio.vad import SileroVad
from engine.backends import create_backend
from engine.backends.base import Backend
from engine.errors import ModelLoadError
from engine.pipeline import Pipeline, PipelineConfig
from engine.serve.config import ServeConfig
from engine.serve.decoding import job_backend
from engine.serve.jobs import JobOptions, JobRegistry, QueueFull
from engine.serve.known_speakers import reference_recogniser
from engine.speakers import SpeakerConfig


class Server:
    def __init__(
        self, backend: Backend, shared: Any, pipeline_config: PipelineConfig, config: ServeConfig
    ) -> None:
        self.backend, self.shared = backend, shared  # shared: a SharedDecode or a WhisperBatcher
        self.pipeline_config, self.config = pipeline_config, config
        self.detector = SileroVad(pipeline_config.vad)
        self.registry = JobRegistry(self.pipeline, config.max_queued_jobs)
        self.places = Places(self.registry, config.max_queued_jobs)
        self.folder = Path(tempfile.mkdtemp(prefix="murmur-serve-"))
        self.started = time.monotonic()
        self.ready = True

    @classmethod
    def create(
        cls, backend_name: str, options: dict[str, Any], pipeline_config: PipelineConfig, config: ServeConfig
    ) -> Server:
        if backend_name == "whisper":  # a stream's first lines after one chunk, not one batch
            options = {"ramp": True, **options}
        backend = create_backend(backend_name, **options)
        shared = None
        if backend_name == "vibevoice":
            from engine.serve.shared import SharedBackend, SharedDecode

            shared = SharedDecode(backend)  # type: ignore[arg-type]  # loads the model
            backend = SharedBackend(backend, shared)  # type: ignore[arg-type]
        else:
            from engine.serve.whisper_batch import WhisperBatcher
            from engine.serve.whisper_shared import SharedWhisperBackend

            _load_whisper(backend)
            shared = WhisperBatcher(backend.loaded(), backend.config.batch_size).start()  # type: ignore[attr-defined]
            backend = SharedWhisperBackend(backend, shared)  # type: ignore[arg-type]
        return cls(backend, shared, pipeline_config, config)

    @property
    def model(self) -> str:
        return self.backend.describe()

    def pipeline(self, options: JobOptions) -> Pipeline:
        """The pipeline of one job: the shared backend and detector, the job's speaker and decode
        choices (`engine.serve.decoding`; the route has already refused what the backend cannot do)
        and its known speakers (`engine.serve.known_speakers`)."""
        speakers = job_speakers(self.pipeline_config.speakers, options)
        config = dataclasses.replace(self.pipeline_config, speakers=speakers)
        pipeline = Pipeline(job_backend(self.backend, options.decoding), config, detector=self.detector)
        if options.known_speakers is not None:  # the request's references stand in for --voices
            pipeline.voices = reference_recogniser(options.known_speakers, pipeline.diarizer)
        return pipeline

    def close(self) -> None:
        self.ready = False
        self.registry.shutdown()
        if self.shared is not None:
            self.shared.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


class Places:
    """`total` places for jobs (the registry's) and uploads arriving; used from the event loop only."""

    def __init__(self, registry: JobRegistry, total: int) -> None:
        self.registry, self.total = registry, total
        self.uploads = 0  # requests whose body is arriving or being measured

    @property
    def taken(self) -> int:
        return self.registry.active + self.uploads

    @property
    def full(self) -> bool:
        return self.taken >= self.total

    @contextmanager
    def arriving(self) -> Iterator[None]:
        """Hold a place while an upload arrives; `QueueFull` when none is left."""
        if self.full:
            raise QueueFull(f"the server is busy with {self.taken} jobs and uploads; try again shortly")
        self.uploads += 1
        try:
            yield
        finally:
            self.uploads -= 1


def job_speakers(speakers: SpeakerConfig, options: JobOptions) -> SpeakerConfig:
    """The server's speaker settings with a job's choices: its diarizer (or none when it asked for
    no speakers), and its number of speakers, which replaces any bounds, or its own bounds."""
    if options.diarize is False:
        speakers = dataclasses.replace(speakers, diarizer="none")
    elif options.diarizer is not None:
        speakers = dataclasses.replace(speakers, diarizer=options.diarizer)
    if options.num_speakers is not None:
        return dataclasses.replace(speakers, num_speakers=options.num_speakers, min_speakers=None,
                                   max_speakers=None)  # fmt: skip
    bounds = {"min_speakers": options.min_speakers, "max_speakers": options.max_speakers}
    given = {name: count for name, count in bounds.items() if count is not None}
    return dataclasses.replace(speakers, **given) if given else speakers


def _load_whisper(backend: Any) -> None:
    from engine.backends.whisper import load_model

    try:
        backend.attach(load_model(backend.config))
    except ModelLoadError:
        raise
    except Exception as exc:
        raise ModelLoadError(f"the whisper model could not be loaded: {exc}") from exc
