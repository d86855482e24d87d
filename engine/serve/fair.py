"""The fair multi-job work source: every job's chunks feed one long-running decode loop.

`FairSource` implements `engine.decode.work.WorkSource`. Each job adds a lazy iterator of its
requests (frozen dataclasses with a job-local `id`: VibeVoice's `DecodeRequest`s, or whisper's
clips, `engine.serve.whisper_batch.Clip`) and a `deliver` callback; the source renumbers requests
with ids unique across jobs, hands them to the decoder's free rows (as `Work` in the decoder's base
mode when it was given one, else as they are), and `route` sends each finished result (a frozen
dataclass with the same `id`) back to its job under its local id.

Order (when a row frees up):
1. work handed back (loop retries, a batch abandoned on out-of-memory) first: it was admitted
   already, and finishing it frees its job's memory soonest;
2. otherwise the job with the fewest rows in flight, ties to the one served longest ago. Every job
   gets an equal share of the batch whatever its length, so a short recording arriving behind a
   ten-hour one starts at once and finishes in about its own decode time; no job waits for
   another to end, and a lone job still gets every row.

A request is built (its audio encoded) only when a row takes it, in the decode thread, exactly as
in a local run, so at most about one batch of embeddings exists at a time. An error while building
a job's request fails that job alone. `cancel(job)` drops its queued chunks at once, and
`cancelled(id)` tells the scheduler to free its rows at its next step; `rows_freed` and
`chunks_dropped` count both (the server's metrics show them).
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from engine.decode.sampling import DecodeMode
from engine.decode.work import Work

Deliver = Callable[[Any], None]  # a result (e.g. a `DecodeResult`), or the error that ended the job


@dataclass(slots=True, eq=False)
class _Job:
    requests: Iterator[Any]
    deliver: Deliver
    total: int  # requests the job will send
    built: int = 0  # requests taken so far
    in_flight: int = 0  # requests handed to rows and not yet finished
    served: int = 0  # tick of the last time a row took this job's work
    exhausted: bool = False
    cancelled: bool = False


class FairSource:
    """A `WorkSource` shared by many jobs (see the module docstring for the order)."""

    def __init__(self, mode: DecodeMode | None = None) -> None:
        self._mode = mode  # None: requests are handed out as they are, not as `Work`
        self._ready = threading.Condition()
        self._jobs: dict[int, _Job] = {}
        self._front: deque[Any] = deque()
        self._owner: dict[int, tuple[int, int]] = {}  # request id → (job id, job-local id)
        self._ids = itertools.count()
        self._ticks = itertools.count(1)
        self._closed = False
        self.rows_freed = 0  # rows freed because their job was cancelled
        self.chunks_dropped = 0  # queued chunks never decoded because their job was cancelled

    # jobs' side
    def add(self, job_id: int, requests: Iterable[Any], total: int, deliver: Deliver) -> None:
        """Queue a job's `total` requests (read lazily); `deliver` gets each result or its error."""
        with self._ready:
            if job_id in self._jobs:
                raise ValueError(f"job {job_id} is already queued")
            self._jobs[job_id] = _Job(iter(requests), deliver, total)
            self._ready.notify_all()

    def cancel(self, job_id: int) -> None:
        """Drop the job's queued chunks now; its rows are freed at the scheduler's next step."""
        with self._ready:
            job = self._jobs.get(job_id)
            if job is None or job.cancelled:
                return
            job.cancelled = True  # its rows still map to it until the scheduler frees them
            self.chunks_dropped += max(job.total - job.built, 0)
            self._front = deque(self._drop_cancelled(self._front))
            self._forget_if_idle(job_id)

    def finish(self, job_id: int) -> None:
        """The job needs nothing more (all results in, or it gave up): forget it."""
        self.cancel(job_id)

    def close(self) -> None:
        """No more jobs: an idle decode loop returns."""
        with self._ready:
            self._closed = True
            self._ready.notify_all()

    def route(self, result: Any) -> None:
        """Send a finished result to its job (a cancelled job's results are dropped)."""
        with self._ready:
            owner = self._owner.pop(result.id, None)
            job = None if owner is None else self._jobs.get(owner[0])
            if job is None:
                return
            job.in_flight -= 1
            self._forget_if_idle(owner[0])
        if not job.cancelled:
            job.deliver(dataclasses.replace(result, id=owner[1]))

    def fail_all(self, error: BaseException) -> None:
        """The decode loop failed: every job in flight ends with `error`."""
        with self._ready:
            jobs = [j for j in self._jobs.values() if not j.cancelled]
            self._jobs.clear()
            self._owner.clear()
            self._front.clear()
        for job in jobs:
            job.deliver(error)

    # the scheduler's side (`WorkSource`)
    def pop(self) -> Any:
        while True:
            work = self.poll()
            if work is not None:
                return work
            with self._ready:
                if self._closed:
                    return None
                if not self._waiting_locked():
                    self._ready.wait()

    def poll(self) -> Any:
        while True:
            with self._ready:
                if self._front:
                    return self._front.popleft()
                chosen = self._next_job()
                if chosen is None:
                    return None
                job_id, job = chosen
            work = self._build(job_id, job)  # outside the lock: encoding the audio takes a while
            if work is not None:
                return work

    def waiting(self) -> bool:
        with self._ready:
            return self._waiting_locked()

    def push_front(self, works: Iterable[Any]) -> None:
        with self._ready:
            self._front.extendleft(reversed(self._drop_cancelled(works)))
            self._ready.notify_all()

    def cancelled(self, request_id: int) -> bool:
        with self._ready:
            if not self._cancelled_locked(request_id):
                return False
            job_id, _ = self._owner.pop(request_id)
            self.rows_freed += 1
            self._jobs[job_id].in_flight -= 1
            self._forget_if_idle(job_id)
            return True

    @property
    def jobs(self) -> int:
        """Jobs with work queued or in flight."""
        with self._ready:
            return sum(not j.cancelled for j in self._jobs.values())

    # internals (callers hold the lock unless said otherwise)
    def _next_job(self) -> tuple[int, _Job] | None:
        live = [(i, j) for i, j in self._jobs.items() if not j.cancelled and not j.exhausted]
        if not live:
            return None
        job_id, job = min(live, key=lambda item: (item[1].in_flight, item[1].served))
        job.served = next(self._ticks)
        job.in_flight += 1  # reserved now, so a concurrent choice sees it
        return job_id, job

    def _build(self, job_id: int, job: _Job) -> Any:
        """The job's next request as work (lock not held); None when it has no more or failed."""
        try:
            request = next(job.requests)
        except StopIteration:
            return self._unreserve(job_id, job, None)
        except Exception as exc:  # this job's audio or request failed: it alone ends
            self._unreserve(job_id, job, exc)
            return None
        with self._ready:
            if job.cancelled:  # cancelled while this request was built: counted as dropped then
                job.in_flight -= 1
                self._forget_if_idle(job_id)
                return None
            job.built += 1
            request_id = next(self._ids)
            self._owner[request_id] = (job_id, request.id)
        request = dataclasses.replace(request, id=request_id)
        return request if self._mode is None else Work(request, self._mode)

    def _unreserve(self, job_id: int, job: _Job, error: Exception | None) -> None:
        with self._ready:
            job.in_flight -= 1
            job.exhausted = True
            if error is not None:
                job.cancelled = True
            self._forget_if_idle(job_id)
        if error is not None:
            job.deliver(error)

    def _waiting_locked(self) -> bool:
        return bool(self._front) or any(not j.cancelled and not j.exhausted for j in self._jobs.values())

    def _cancelled_locked(self, request_id: int) -> bool:
        owner = self._owner.get(request_id)
        return owner is not None and self._jobs[owner[0]].cancelled

    def _drop_cancelled(self, works: Iterable[Any]) -> list[Any]:
        """`works` less those of cancelled jobs, which are counted as dropped and forgotten."""
        kept = []
        for work in works:
            request_id = work.request.id if isinstance(work, Work) else work.id
            if not self._cancelled_locked(request_id):
                kept.append(work)
                continue
            job_id, _ = self._owner.pop(request_id)
            self._jobs[job_id].in_flight -= 1
            self.chunks_dropped += 1
            self._forget_if_idle(job_id)
        return kept

    def _forget_if_idle(self, job_id: int) -> None:
        job = self._jobs.get(job_id)
        if job is not None and job.cancelled and job.in_flight <= 0:
            del self._jobs[job_id]
            self._owner = {k: v for k, v in self._owner.items() if v[0] != job_id}
