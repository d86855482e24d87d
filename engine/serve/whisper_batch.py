"""One batched whisper decode for every job: faster-whisper calls filled from a `FairSource`.

`WhisperBatcher(model, batch_size).start()` runs one thread per lane (the model's CPU replicas, 1 on a GPU)
for the server's whole life. Each thread takes a call's rows from the shared fair source and decodes
them in one faster-whisper batched call; every job's clips (first passes, repairs, gap fills) enter
that source through `submit`, so a call carries rows of several jobs whenever several are waiting.

Rules of a call (`_take`):
- its rows share their decoding options (`Clip.key`): CTranslate2 takes the timestamp rules of a
  whole call from its first row's prompt and refuses prompts with different numbers of task tokens,
  so first passes batch with first passes and repairs (the other timestamp mode) with repairs, and a
  job's language or hotwords never leak into another's rows; a row that does not fit waits at the
  front of the source for the next call;
- at most `batch_size` rows, and at most the row's own `options.batch_size` rows of any one job (a
  lone job decodes as a local run does: calls of its own batch size, its lanes side by side);
- a job that detects its language (`options.language` None) has a call to itself (the detection
  reads every clip of the call).

A call's clips come from different recordings: they are laid end to end in one array (`layout`),
each at a sample offset equal to its own start modulo one second, then cut by faster-whisper exactly
as from its recording; the segments come back shifted by whole seconds to their recording's time. A
job's words are those of a decode of its own recording; a word's time can differ by what faster-
whisper's word-timing rules read from the row before it in the call (a first word after a long
pause is shortened), as between two local runs batched differently. A job's `Ticket` collects its
results; closing it (the job ended, or was cancelled) drops its queued clips from the source at once
(a call already running finishes; its rows for that job are discarded). `stop()` ends the lanes,
each after the call it is in; every job still waiting for a result then, or submitted later, gets
`Cancelled` instead of waiting for ever. `metrics()` is what /metrics shows: calls, rows over calls,
calls carrying rows of more than one job.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.backends.base import check_cancel
from engine.backends.whisper_decode import DecodeOptions, batched_clips, replicas
from engine.errors import Cancelled
from engine.serve.fair import FairSource

log = logging.getLogger(__name__)
RATE = 16000  # whisper's sample rate
WAIT = 0.05  # seconds between checks of a job's cancel event while it waits for results
STOPPED = "the server is stopping"  # what a job still waiting when the batcher stops is told


@dataclass(frozen=True, slots=True, eq=False)
class Clip:
    """One row of a decode call: a stretch of one job's recording and how to decode it."""

    id: int  # ticket-local, renumbered by the source
    job: int  # the job it belongs to (rows of one job in a call are capped)
    samples: np.ndarray  # the clip's samples, cut as faster-whisper cuts them from its recording
    first: int  # index of its first sample in its recording
    options: DecodeOptions

    @property
    def key(self) -> DecodeOptions:
        """What rows of one call must share: the decoding options less how a job batches."""
        return dataclasses.replace(self.options, batch_size=1, ramp=False, lanes=1)


@dataclass(frozen=True, slots=True)
class Decoded:
    """A clip's segments (faster-whisper's, times in its recording), language and call."""

    id: int
    segments: tuple[Any, ...]
    language: str | None
    seconds: float  # the call's wall seconds per row
    rows: int  # rows of the call


def clips_of(samples: np.ndarray, clips: Sequence[tuple[float, float]], job: int,
             options: DecodeOptions) -> list[Clip]:  # fmt: skip
    """`clips` (start, end seconds, within whisper's window) of a recording's `samples` as rows."""
    cut = [(int(a * RATE), int(b * RATE)) for a, b in clips]  # faster-whisper's own cut
    return [Clip(k, job, samples[a:b], a, options) for k, (a, b) in enumerate(cut)]


class Ticket:
    """One submission's results, in any order, fetched by clip id; `close()` drops what is left."""

    def __init__(self, source: FairSource, source_id: int, count: int) -> None:
        self._source, self._id, self.count = source, source_id, count
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._got: dict[int, Decoded] = {}

    def deliver(self, item: Decoded | BaseException) -> None:
        self._inbox.put(item)

    def get(self, clip: int, cancel: threading.Event | None = None) -> Decoded:
        """Clip `clip`'s result, waiting for it (raises the error that ended the job, or `Cancelled`)."""
        while clip not in self._got:
            check_cancel(cancel)
            try:
                item = self._inbox.get(timeout=WAIT)
            except queue.Empty:
                continue
            if isinstance(item, BaseException):
                raise item
            self._got[item.id] = item
        return self._got.pop(clip)

    def close(self) -> None:
        self._source.finish(self._id)


class WhisperBatcher:
    """faster-whisper's `model` decoding every job's clips in shared calls (see the module contract)."""

    def __init__(self, model: Any, batch_size: int) -> None:
        if batch_size < 1:
            raise ValueError(f"batch size must be at least 1, got {batch_size}")
        self.model, self.batch_size = model, batch_size
        self.source = FairSource()
        self.calls = self.rows = self.mixed = self.failures = 0
        self._stopped = False
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._threads = [threading.Thread(target=self._loop, name=f"whisper-batch-{k}", daemon=True)
                         for k in range(max(1, replicas(model)))]  # fmt: skip

    def start(self) -> WhisperBatcher:
        """Start the lanes' threads (clips submitted before wait until then)."""
        for thread in self._threads:
            thread.start()
        return self

    def submit(self, clips: Sequence[Clip]) -> Ticket:
        """Queue `clips` (one job's, ids 0…n-1) for the shared calls; their results come to the ticket."""
        with self._lock:  # held while adding, so a stop either sees these clips or refuses them
            source_id = next(self._ids)
            ticket = Ticket(self.source, source_id, len(clips))
            if self._stopped:
                ticket.deliver(Cancelled(STOPPED))
            else:
                self.source.add(source_id, clips, len(clips), ticket.deliver)
        return ticket

    def metrics(self) -> list[tuple[str, str, str, float]]:
        """(name, kind, help, value) of each metric /metrics shows."""
        with self._lock:
            calls, rows, mixed, failures = self.calls, self.rows, self.mixed, self.failures
        return [
            ("murmur_whisper_calls_total", "counter", "batched whisper decode calls", calls),
            ("murmur_whisper_rows_total", "counter", "clips decoded, summed over calls", rows),
            ("murmur_whisper_rows_per_call", "gauge", "mean rows per decode call",
             rows / calls if calls else 0.0),
            ("murmur_whisper_mixed_calls_total", "counter", "calls carrying rows of more than one job",
             mixed),
            ("murmur_queue_jobs", "gauge", "submissions with clips queued or in a call", self.source.jobs),
            ("murmur_chunks_dropped_cancelled_total", "counter", "queued clips dropped by a cancel",
             self.source.chunks_dropped),
            ("murmur_decode_restarts_total", "counter", "decode calls that failed", failures),
        ]  # fmt: skip

    def stop(self) -> None:
        """End the lanes after their current calls; every job still waiting gets `Cancelled`."""
        with self._lock:
            self._stopped = True
        self.source.close()
        self.source.fail_all(Cancelled(STOPPED))
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout=10)

    def _loop(self) -> None:
        while True:
            rows = self._take()
            if rows is None:
                return
            try:
                results = self._decode(rows)
            except Exception as exc:  # the jobs waiting fail, the server goes on
                log.exception("a batched whisper call failed")
                with self._lock:
                    self.failures += 1
                self.source.fail_all(exc)
                continue
            for result in results:
                self.source.route(result)

    def _take(self) -> list[Clip] | None:
        """The rows of the next call (see the module contract); None once the source is closed."""
        first = self.source.pop()
        if first is None:
            return None
        rows, aside, per_job = [first], [], Counter([first.job])
        while len(rows) < self.batch_size and len(aside) < self.batch_size:
            row = self.source.poll()
            if row is None:
                break
            if fits(row, first, per_job):
                rows.append(row)
                per_job[row.job] += 1
            else:
                aside.append(row)
        self.source.push_front(aside)
        return rows

    def _decode(self, rows: list[Clip]) -> list[Decoded]:
        from faster_whisper import BatchedInferencePipeline

        samples, clips, shifts = layout(rows)
        started = time.perf_counter()
        pipeline = BatchedInferencePipeline(model=self.model)
        found, language = batched_clips(pipeline, samples, clips, rows[0].options)
        seconds = (time.perf_counter() - started) / len(rows)
        with self._lock:
            self.calls += 1
            self.rows += len(rows)
            self.mixed += len({r.job for r in rows}) > 1
        return [Decoded(r.id, tuple(shifted(s, shift) for s in segs), language, seconds, len(rows))
                for r, segs, shift in zip(rows, found, shifts, strict=True)]  # fmt: skip


def fits(row: Clip, first: Clip, per_job: Counter[int]) -> bool:
    """Whether `row` may join the call `first` opened (same options, its job's share not used up)."""
    if row.key != first.key or per_job[row.job] >= row.options.batch_size:
        return False
    return first.options.language is not None or row.job == first.job


def layout(rows: Sequence[Clip]) -> tuple[np.ndarray, list[tuple[float, float]], list[int]]:
    """The rows end to end in one array, each at an offset equal to its own first sample modulo one
    second: the array, each row's (start, end) seconds in it (cut back to exactly its samples), and
    the whole seconds to add to its times to be back in its recording's time."""
    starts, end = [], 0
    for row in rows:
        start = end + (row.first - end) % RATE
        starts.append(start)
        end = start + len(row.samples)
    samples = np.zeros(end, dtype=np.float32)
    for row, start in zip(rows, starts, strict=True):
        samples[start : start + len(row.samples)] = row.samples
    clips = [((s + 0.5) / RATE, (s + len(r.samples) + 0.5) / RATE) for r, s in zip(rows, starts, strict=True)]
    return samples, clips, [(r.first - s) // RATE for r, s in zip(rows, starts, strict=True)]


def shifted(segment: Any, seconds: int) -> Any:
    """A faster-whisper segment moved by whole `seconds`, rounded as faster-whisper rounds (segments
    to 1 ms, words to 10 ms) and, as it does, never before its recording's start."""
    if seconds == 0:
        return segment
    words = None if segment.words is None else [
        dataclasses.replace(w, start=_moved(w.start, seconds, 2), end=_moved(w.end, seconds, 2))
        for w in segment.words
    ]  # fmt: skip
    return dataclasses.replace(segment, start=_moved(segment.start, seconds, 3),
                               end=_moved(segment.end, seconds, 3), words=words,
                               seek=segment.seek + seconds * 100)  # fmt: skip


def _moved(value: float, seconds: int, digits: int) -> float:
    return max(0.0, round(value + seconds, digits))
