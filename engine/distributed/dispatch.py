"""The driver's loop: keep every worker's batches coming, collect results, survive dead workers.

`Dispatcher(workers, queue, batch_size)` sends batches of up to `batch_size` jobs from the
global `ChunkQueue` to the workers (`plan_fill`: breadth first, even shares of a short queue),
keeping `calls_in_flight` batches queued on each so a worker never waits for the driver.
`run(audio)` yields `ChunkDone` as results come back and `FileFailed` when a file has lost a
chunk for good; it ends when the queue is empty and nothing is in flight. Jobs may be added
(`queue.put`) between `step`s, so files can be queued while others decode. A worker whose
process dies has all its batches re-queued on the others; a batch that raises is re-queued too,
each job going out alone, at most `max_retries` more times (the queue's rule); a chunk that
fails every try fails its file (its other chunks are dropped). When no worker is left, every
remaining file fails. `cancel` is checked every `poll` seconds: in-flight calls are cancelled
and `Cancelled` is raised.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from engine.distributed.cluster import WorkerHandle
from engine.distributed.queue import ChunkQueue, Job, plan_fill
from engine.errors import Cancelled
from engine.types import ChunkResult


@dataclass(frozen=True, slots=True)
class ChunkDone:
    file: Hashable
    result: ChunkResult
    worker: str


@dataclass(frozen=True, slots=True)
class FileFailed:
    file: Hashable
    message: str


Event = ChunkDone | FileFailed


@dataclass(frozen=True, slots=True, eq=False)
class _Call:
    worker: WorkerHandle
    jobs: tuple[Job, ...]


class Dispatcher:
    def __init__(
        self,
        workers: list[WorkerHandle],
        queue: ChunkQueue,
        batch_size: int,
        calls_in_flight: int = 2,
        cancel: threading.Event | None = None,
        poll: float = 0.1,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch size must be at least 1, got {batch_size}")
        self.workers = list(workers)
        self.queue = queue
        self.batch_size = batch_size
        self.calls_in_flight = calls_in_flight
        self.cancel = cancel
        self.poll = poll
        self.failed: dict[Hashable, str] = {}
        self.workers_lost = 0
        self.chunks_retried = 0
        self._calls: dict[Any, _Call] = {}  # ObjectRef → call

    @property
    def busy(self) -> bool:
        """Whether jobs are waiting or in flight."""
        return bool(self._calls) or len(self.queue) > 0

    def run(self, audio: Mapping[Hashable, Any]) -> Iterator[Event]:
        """Events until the queue is drained (`audio`: file key → ObjectRef of its samples)."""
        while self.busy:
            yield from self.step(audio, self.poll)

    def step(self, audio: Mapping[Hashable, Any], timeout: float) -> list[Event]:
        """Fill the workers, then the events of the calls that finish within `timeout` seconds."""
        import ray

        self._check_cancel()
        self._fill(audio)
        if not self._calls:
            return list(self._fail_everything("no worker is left (every worker process died)"))
        ready, _ = ray.wait(list(self._calls), num_returns=1, timeout=timeout)
        return [event for ref in ready for event in self._collect(ref, self._calls.pop(ref))]

    def _fill(self, audio: Mapping[Hashable, Any]) -> None:
        calls = [sum(c.worker is w for c in self._calls.values()) for w in self.workers]
        for index, jobs in plan_fill(self.queue, calls, self.batch_size, self.calls_in_flight):
            worker = self.workers[index]
            items = [(j.file, audio[j.file], j.chunk) for j in jobs]
            self._calls[worker.actor.transcribe.remote(items)] = _Call(worker, tuple(jobs))

    def _collect(self, ref: Any, call: _Call) -> Iterator[Event]:
        import ray

        try:
            pairs = ray.get(ref)
        except ray.exceptions.RayActorError:
            if call.worker in self.workers:
                self.workers.remove(call.worker)
                self.workers_lost += 1
            yield from self._retry(call.jobs, f"{call.worker.name} died")
            return
        except ray.exceptions.RayError as exc:
            cause = getattr(exc, "cause", None) or exc
            yield from self._retry(call.jobs, f"{type(cause).__name__}: {cause}")
            return
        for file, result in pairs:
            if file not in self.failed:
                yield ChunkDone(file, result, call.worker.name)

    def _retry(self, jobs: tuple[Job, ...], reason: str) -> Iterator[Event]:
        for job in jobs:
            if job.file in self.failed:
                continue
            if self.queue.retry(job):
                self.chunks_retried += 1
                continue
            message = f"chunk {job.chunk.index + 1} failed {job.attempts + 1} times; last: {reason}"
            yield from self._fail(job.file, message)

    def _fail(self, file: Hashable, message: str) -> Iterator[Event]:
        self.failed[file] = message
        self.queue.drop(file)
        yield FileFailed(file, message)

    def _fail_everything(self, message: str) -> Iterator[Event]:
        files = list(dict.fromkeys(job.file for job in self.queue.take(len(self.queue) or 1)))
        for file in files:
            if file not in self.failed:
                yield from self._fail(file, message)

    def _check_cancel(self) -> None:
        if self.cancel is None or not self.cancel.is_set():
            return
        import ray

        for ref in list(self._calls):
            with contextlib.suppress(Exception):  # a call that just finished has nothing to cancel
                ray.cancel(ref)
        self._calls.clear()
        raise Cancelled()
