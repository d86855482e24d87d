"""`RayBackend`: one recording's chunks decoded on a Ray cluster, behind the ordinary `Backend` interface.

Anything that runs a `Pipeline` (evaluation, benchmarks) can spread each recording's chunks over
the cluster by handing it a `RayBackend(name, options, cluster)` instead of a local backend.
The workers start (and load their models) on the first `transcribe` and stay up until `close`;
the recording's audio goes into Ray's object store once; chunks go through the same queue and
dispatcher as a corpus run (longest first, dead workers' chunks re-queued, bounded retries).
A chunk that fails every retry raises `ClusterError`. Its attributes and `describe()` are the
local backend's, so transcripts name the same model as a single-process run.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

from engine.backends import create_backend
from engine.distributed.cluster import WorkerHandle, start_workers, stop_workers
from engine.distributed.config import ClusterConfig
from engine.distributed.dispatch import Dispatcher, FileFailed
from engine.distributed.queue import ChunkQueue, Job
from engine.errors import ClusterError
from engine.types import Chunk, ChunkResult, Recording


class RayBackend:
    def __init__(self, backend: str, options: dict[str, Any], cluster: ClusterConfig) -> None:
        self._options = {k: v for k, v in options.items() if v is not None}
        self._local = create_backend(backend, **self._options)  # its model never loads here
        self._backend = backend
        self._cluster = cluster
        self._workers: list[WorkerHandle] | None = None
        self.name = self._local.name
        self.sample_rate = self._local.sample_rate
        self.default_chunk_seconds = self._local.default_chunk_seconds
        self.max_chunk_seconds = self._local.max_chunk_seconds
        self.labels_speakers = self._local.labels_speakers
        given = getattr(getattr(self._local, "config", None), "batch_size", 8)
        self.batch_size = int(given) if given is not None else 16  # None: the engine's own limit

    def describe(self) -> str:
        return self._local.describe()

    def transcribe(
        self, recording: Recording, chunks: Sequence[Chunk], cancel: threading.Event | None = None
    ) -> Iterator[ChunkResult]:
        import ray

        if self._workers is None:
            self._workers = start_workers(self._cluster, self._backend, self._options)
        queue = ChunkQueue(self._cluster.order, self._cluster.max_retries)
        queue.put(Job(0, chunk) for chunk in chunks)
        dispatcher = Dispatcher(self._workers, queue, self.batch_size, self._cluster.calls_in_flight, cancel)
        try:
            for event in dispatcher.run({0: ray.put(recording.samples)}):
                if isinstance(event, FileFailed):
                    raise ClusterError(event.message)
                yield event.result
        finally:
            self._workers = dispatcher.workers  # the ones still alive

    def worker_cpu_seconds(self) -> float:
        """CPU seconds the live workers have used so far (0 before they start)."""
        import ray

        return float(sum(ray.get([w.actor.cpu_seconds.remote() for w in self._workers or ()])))

    def close(self) -> None:
        """Stop the workers (they stop with this process anyway)."""
        if self._workers:
            stop_workers(self._workers)
        self._workers = None
