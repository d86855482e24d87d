"""The global chunk queue: which chunk goes out next, and what happens to one that failed.

A `Job` is one chunk of one file plus how often it was tried. `ChunkQueue` hands out batches in
the order its `Order` policy gives (`ORDERS`: "longest" first, the classic LPT rule that keeps the
makespan near the ideal, or "fifo" as the files came); jobs that failed come back through
`retry`, which says whether the chunk may be tried again (at most 1 + `max_retries` times) and
sends retried jobs out alone, so that one bad chunk cannot take a batch of good ones down with
it twice. `plan_fill` decides which worker gets which batch. Pure Python: the scheduling
simulation in bench/scale.py uses the same queue and plan.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from engine.types import Chunk


@dataclass(frozen=True, slots=True)
class Job:
    file: Hashable  # which file the chunk belongs to (the driver's key)
    chunk: Chunk
    attempts: int = 0  # failed tries so far

    @property
    def seconds(self) -> float:
        return self.chunk.duration


class Order(Protocol):
    def key(self, job: Job, arrival: int) -> tuple[float, int]:
        """Smaller keys go out first; `arrival` counts jobs as they were queued."""
        ...


class LongestFirst:
    def key(self, job: Job, arrival: int) -> tuple[float, int]:
        return (-job.seconds, arrival)


class Fifo:
    def key(self, job: Job, arrival: int) -> tuple[float, int]:
        return (0.0, arrival)


ORDERS: dict[str, type[Order]] = {"longest": LongestFirst, "fifo": Fifo}


class ChunkQueue:
    """Jobs waiting for a worker, in the order of one `Order` policy."""

    def __init__(self, order: str = "longest", max_retries: int = 2) -> None:
        if order not in ORDERS:
            raise ValueError(f"queue order must be one of {', '.join(ORDERS)}, got {order!r}")
        self._order = ORDERS[order]()
        self._max_retries = max_retries
        self._heap: list[tuple[tuple[float, int], int, Job]] = []
        self._arrivals = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def put(self, jobs: Iterable[Job]) -> None:
        for job in jobs:
            arrival = next(self._arrivals)
            heapq.heappush(self._heap, (self._order.key(job, arrival), arrival, job))

    def take(self, size: int) -> list[Job]:
        """Up to `size` jobs; a job that already failed goes out on its own."""
        batch: list[Job] = []
        while self._heap and len(batch) < size:
            job = self._heap[0][2]
            if job.attempts and batch:
                break
            heapq.heappop(self._heap)
            batch.append(job)
            if job.attempts:
                break
        return batch

    def retry(self, job: Job) -> bool:
        """Queue a failed job again; False when it has used up its tries."""
        failed = replace(job, attempts=job.attempts + 1)
        if failed.attempts > self._max_retries:
            return False
        self.put([failed])
        return True

    def drop(self, file: Hashable) -> list[Job]:
        """Remove (and return) every waiting job of `file`, e.g. once the file has failed."""
        dropped = [entry[2] for entry in self._heap if entry[2].file == file]
        self._heap = [entry for entry in self._heap if entry[2].file != file]
        heapq.heapify(self._heap)
        return dropped


def plan_fill(
    queue: ChunkQueue, in_flight: Sequence[int], batch: int, depth: int
) -> list[tuple[int, list[Job]]]:
    """The batches to send now, as (worker index, jobs), given each worker's calls in flight.

    Breadth first: every worker gets its first call before any gets a second, up to `depth`
    calls each. Each batch is an even share of what is queued at that level (at most `batch`),
    so a short queue is spread over all workers instead of filling the first ones.
    """
    counts = list(in_flight)
    plan: list[tuple[int, list[Job]]] = []
    for level in range(1, depth + 1):
        share = max(1, min(batch, math.ceil(len(queue) / max(len(counts), 1))))
        for worker, calls in enumerate(counts):
            if calls >= level or not len(queue):
                continue
            jobs = queue.take(share)
            plan.append((worker, jobs))
            counts[worker] += 1
    return plan
