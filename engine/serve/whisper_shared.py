"""The whisper backend as a server job sees it: its chunks decoded in the server's shared calls.

`SharedWhisperBackend(backend, batcher)` is the `Backend` each job's pipeline calls. For the `fast`
quality it does what a local run does (`whisper_decode.checked`: batches in `batch_plan` order,
each checked, its broken chunks decoded again in the other timestamp mode and kept when better,
speech still without words decoded as clips), but every decode (the first passes of all its chunks,
queued at once; the repairs; the gap fills) goes through the `WhisperBatcher`, where it shares
calls with the other jobs' clips of the same options, repairs with repairs. The decisions depend only
on the first-pass results, in chunk order, so a job gets the words it gets alone. The `accurate`
quality (sequential, conditioned on the previous text) cannot share calls: it runs in the job's
thread on the same loaded model. A job's cancel event stops it within `whisper_batch.WAIT`
seconds and drops its queued clips; `variant(**changes)` is the same shared decode with other
whisper options (e.g. a job's own language or hotwords).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from engine.backends.base import check_cancel
from engine.backends.whisper import WhisperBackend
from engine.backends.whisper_decode import MAX_CLIP, Batched, DecodeOptions, FirstPass, batch_plan, checked
from engine.backends.whisper_words import all_words, chunk_result
from engine.serve.whisper_batch import Decoded, Ticket, WhisperBatcher, clips_of
from engine.types import Chunk, ChunkResult, Recording


class SharedWhisperBackend:
    """faster-whisper over a job's chunks, in the server's shared calls (see the module contract)."""

    name = WhisperBackend.name
    sample_rate = WhisperBackend.sample_rate
    default_chunk_seconds = WhisperBackend.default_chunk_seconds
    max_chunk_seconds = WhisperBackend.max_chunk_seconds
    labels_speakers = WhisperBackend.labels_speakers
    packs_at_pauses = WhisperBackend.packs_at_pauses

    def __init__(self, backend: WhisperBackend, batcher: WhisperBatcher, jobs: Any = None) -> None:
        self.backend, self.batcher = backend, batcher
        self.config = backend.config
        self._jobs = jobs if jobs is not None else itertools.count()  # job numbers, shared by variants

    def describe(self) -> str:
        return self.backend.describe()

    def variant(self, **changes: Any) -> SharedWhisperBackend:
        """The same model and shared calls, with other whisper options (`WhisperConfig` fields)."""
        return SharedWhisperBackend(self.backend.variant(**changes), self.batcher, self._jobs)

    def transcribe(
        self, recording: Recording, chunks: Sequence[Chunk], cancel: threading.Event | None = None
    ) -> Iterator[ChunkResult]:
        if recording.sample_rate != self.sample_rate:
            raise ValueError(f"whisper needs {self.sample_rate} Hz audio, got {recording.sample_rate}")
        check_cancel(cancel)
        if self.backend.quality != "fast":  # accurate, or sampling: no shared calls
            yield from self.backend.transcribe(recording, chunks, cancel)
            return
        job = _JobDecode(self.batcher, recording, next(self._jobs), cancel)
        try:
            yield from job.run(chunks, self.backend.decode_options())
        finally:
            job.close()


class _JobDecode:
    """One job's submissions to the batcher, closed together when the job ends."""

    def __init__(self, batcher: WhisperBatcher, recording: Recording, job: int,
                 cancel: threading.Event | None) -> None:  # fmt: skip
        self.batcher, self.recording, self.job, self.cancel = batcher, recording, job, cancel
        self.tickets: list[Ticket] = []

    def run(self, chunks: Sequence[Chunk], options: DecodeOptions) -> Iterator[ChunkResult]:
        first = self._submit([(c.start, c.end) for c in chunks], options)

        def passes() -> Iterator[FirstPass]:
            for group in batch_plan(len(chunks), options.batch_size, options.ramp):
                decoded = [first.get(k, self.cancel) for k in group]
                yield [_result(chunks[k], d) for k, d in zip(group, decoded, strict=True)], self._again

        batched: Batched = self.decode
        yield from checked(passes(), batched, options, self.cancel)

    def decode(
        self, clips: Sequence[tuple[float, float]], options: DecodeOptions
    ) -> tuple[list[list[Any]], str | None]:
        """`clips` decoded in the shared calls, waited for: each clip's segments, and the language."""
        ticket = self._submit(clips, options)
        try:
            decoded = [ticket.get(k, self.cancel) for k in range(len(clips))]
        finally:
            ticket.close()
            self.tickets.remove(ticket)
        return [list(d.segments) for d in decoded], decoded[0].language if decoded else options.language

    def close(self) -> None:
        for ticket in self.tickets:
            ticket.close()

    def _again(self, broken: Sequence[ChunkResult]) -> Batched:
        return self.decode  # repairs share calls with other repairs (their options differ from first passes)

    def _submit(self, clips: Sequence[tuple[float, float]], options: DecodeOptions) -> Ticket:
        bounded = [(a, min(b, a + MAX_CLIP)) for a, b in clips]  # as `whisper_decode._batched` bounds them
        ticket = self.batcher.submit(clips_of(self.recording.samples, bounded, self.job, options))
        self.tickets.append(ticket)
        return ticket


def _result(chunk: Chunk, decoded: Decoded) -> ChunkResult:
    segments = decoded.segments
    return chunk_result(chunk, segments, all_words(segments), decoded.seconds, decoded.language, decoded.rows)
