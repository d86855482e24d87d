"""Whisper's batches in lanes: on a CPU, CTranslate2 calls that run side by side, one thread each.

One CTranslate2 call spread over several threads leaves much of them waiting (a beam search
step is many small matrix products; a batch's last rows and a loop's tail run on one core):
on 2 cores the 15 windows of a 5-speaker meeting took 24.7 CPU s and 16.4 s in calls of 8 on
two threads, but 15.7 CPU s and 10.1 s in calls of 2 on one thread each, two at a time. So:
- `cpu_plan(threads, lanes, quality, cores)`: how a CPU model is loaded, as (lanes, threads
  per lane): `lanes` replicas (CTranslate2's `num_workers`, which share the weights) sharing
  `threads` in all. By default one single-thread lane per usable core, up to `MAX_AUTO_LANES`
  (CTranslate2's own default is 4 threads in one call); one lane for the `accurate` quality (its
  calls come one at a time), with as many threads;
- `available_cores()`: the cores this process may use: its affinity, no more than a container's
  CPU quota (cgroup v2 `cpu.max`) and `OMP_NUM_THREADS` when it is set (CTranslate2 reads it);
- `ahead(work, items, lanes)`: `work(item)` for each item, yielded in order, with up to `lanes`
  running at once in threads of their own and one more queued, so the lanes stay busy while
  the caller handles a result. With one lane it is a plain loop in the caller's thread. When
  the caller stops (an error, a cancel, a closed generator), queued items never start and
  running ones are waited for, so no decode outlives the call.
Results do not depend on the lanes: each batch is decoded alone, the same way, and whatever
looks across batches (the typical word rate, repairs) is done by the caller in chunk order.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
CPU_MAX = Path("/sys/fs/cgroup/cpu.max")  # a container's CPU quota: "quota period" or "max period"
MAX_AUTO_LANES = 4  # lanes (and threads) when not chosen: one per core up to this (measured on 2 cores)


def cpu_plan(threads: int, lanes: int, quality: str, cores: int) -> tuple[int, int]:
    """(lanes, threads per lane) for whisper on a CPU: `threads` in all (0: `cores`, at most
    `MAX_AUTO_LANES`) in `lanes` lanes (0: one per thread up to `MAX_AUTO_LANES`; one for the
    `accurate` quality)."""
    total = threads or min(max(1, cores), MAX_AUTO_LANES)
    count = lanes or (1 if quality == "accurate" else min(MAX_AUTO_LANES, total))
    return count, max(1, total // count)


def available_cores(cpu_max: Path = CPU_MAX) -> int:
    """The cores this process may run on, bounded by a CPU quota and `OMP_NUM_THREADS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    cores = min(cores, quota_cores(cpu_max) or cores)
    omp = os.environ.get("OMP_NUM_THREADS", "").strip()
    return min(cores, int(omp)) if omp.isdigit() and int(omp) > 0 else cores


def quota_cores(cpu_max: Path) -> int | None:
    """Whole cores of a cgroup v2 CPU quota ("150000 100000" → 2), None without one ("max …")."""
    try:
        quota, period = cpu_max.read_text().split()[:2]
        return max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError, ZeroDivisionError):  # no file, "max", or unreadable
        return None


def ahead(work: Callable[[T], R], items: Sequence[T], lanes: int) -> Iterator[R]:
    """`work(item)` for every item, in order, up to `lanes` at once (see the module contract)."""
    if lanes <= 1:
        for item in items:
            yield work(item)
        return
    with ThreadPoolExecutor(lanes, thread_name_prefix="whisper-lane") as pool:
        rest = iter(items)
        running: deque[Future[R]] = deque(pool.submit(work, item) for item in islice(rest, lanes + 1))
        try:
            while running:
                done = running.popleft().result()
                for item in rest:  # one more, so the lanes stay busy while the caller works
                    running.append(pool.submit(work, item))
                    break
                yield done
        finally:
            for future in running:
                future.cancel()
