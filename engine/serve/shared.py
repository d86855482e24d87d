"""One decode loop for every job: the server's VibeVoice backend behind a `FairSource`.

`SharedDecode` runs Murmur's decoder in one thread for the server's whole life over a
`FairSource`; every job's chunks enter its continuously refilled batch. `SharedBackend` is the
`Backend` each job's pipeline calls: it builds the job's requests exactly as a local run does
(`VibeVoiceBackend`'s own request builder and reply parser), queues them with the source and
yields `ChunkResult`s as the shared loop finishes them. A job's cancel event drops its queued
chunks and frees its rows; a failure of the decode loop fails the jobs in flight and the loop
starts again for the next ones.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from engine.backends.base import check_cancel
from engine.backends.vibevoice.backend import VibeVoiceBackend
from engine.decode.api import DecodeResult
from engine.decode.engine import RunStats
from engine.errors import Cancelled, ModelLoadError
from engine.serve.fair import FairSource
from engine.types import Chunk, ChunkResult, Recording

log = logging.getLogger(__name__)
_WAIT = 0.05  # seconds between checks of a job's cancel event while it waits for results


class SharedDecode:
    """Murmur's decoder running over a `FairSource` in one background thread."""

    def __init__(self, backend: VibeVoiceBackend) -> None:
        if backend.config.engine != "murmur":
            raise ModelLoadError("a batch shared across clients needs Murmur's engine (--engine murmur)")
        self.loaded, self.decoder = backend._load()
        self.source = FairSource(self.decoder.base_mode)
        self.tokens = 0  # tokens generated, all jobs
        self.kept: list[float] = []  # kept/logical KV at the end of each chunk (evicting policies)
        self.failures = 0
        self._done = (0, 0)  # (steps, Σ rows over steps) of decode calls already over
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="murmur-decode", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.source.close()
        self._thread.join(timeout=10)

    def counters(self) -> tuple[int, int, int]:
        """(decode steps, Σ rows over steps, rows occupied now) since the server started."""
        stats, live = self.decoder.stats, self.decoder.live
        steps, row_steps = self._done[0] + stats.steps, self._done[1] + stats.row_steps
        if live is None:
            return steps, row_steps, 0
        return steps + live.steps, row_steps + live.row_steps, live.table.n

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                for result in self.decoder.decode(self.source, self._stop):
                    self._account(result)
                    self.source.route(result)
                if self._stop.is_set():
                    return
            except Cancelled:
                return
            except Exception as exc:  # e.g. out of memory with one row: its jobs fail, not the server
                log.exception("the shared decode loop failed; restarting it")
                self.failures += 1
                self.source.fail_all(exc)
            finally:  # each `decode` call starts its stats afresh: keep the totals across restarts
                stats = self.decoder.stats
                self._done = (self._done[0] + stats.steps, self._done[1] + stats.row_steps)
                self.decoder.stats = RunStats()

    def _account(self, result: DecodeResult) -> None:
        self.tokens += result.stats.generated_tokens
        if result.stats.kv_kept_last is not None:
            self.kept = [*self.kept[-999:], result.stats.kv_kept_last]


class SharedBackend:
    """The VibeVoice backend as a job sees it, decoding in the server's shared batch."""

    labels_speakers = True

    def __init__(self, backend: VibeVoiceBackend, shared: SharedDecode) -> None:
        self.backend, self.shared = backend, shared
        self.name = backend.name
        self.sample_rate = backend.sample_rate
        self.default_chunk_seconds = backend.default_chunk_seconds
        self.max_chunk_seconds = backend.max_chunk_seconds
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def describe(self) -> str:
        return self.backend.describe()

    def transcribe(
        self, recording: Recording, chunks: Sequence[Chunk], cancel: threading.Event | None = None
    ) -> Iterator[ChunkResult]:
        check_cancel(cancel)
        audible = [(recording, c) for c in chunks if len(recording.slice(c.start, c.end)) > 0]
        silent = [c for c in chunks if len(recording.slice(c.start, c.end)) == 0]
        yield from (ChunkResult(chunk=c, segments=()) for c in silent)  # no samples: nothing said
        if not audible:
            return
        encode_seconds: dict[int, float] = {}
        requests = self.backend._requests(self.shared.loaded, audible, encode_seconds, cancel)
        inbox: queue.SimpleQueue[DecodeResult | BaseException] = queue.SimpleQueue()
        with self._lock:
            job_id = next(self._ids)
        self.shared.source.add(job_id, requests, len(audible), inbox.put)
        try:
            for _ in audible:
                result = _next_result(inbox, cancel)
                chunk = audible[result.id][1]
                seconds = encode_seconds.pop(result.id, 0.0)
                yield self.backend._chunk_result(self.shared.loaded, chunk, result, seconds)
        finally:
            self.shared.source.finish(job_id)  # after a cancel or an error: queued chunks go, rows free


def _next_result(inbox: queue.SimpleQueue[Any], cancel: threading.Event | None) -> DecodeResult:
    while True:
        check_cancel(cancel)
        try:
            item = inbox.get(timeout=_WAIT)
        except queue.Empty:
            continue
        if isinstance(item, BaseException):
            raise item
        return item
