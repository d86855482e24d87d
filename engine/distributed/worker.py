"""The worker: one Ray actor per GPU (or CPU slot) that loads the backend once and decodes batches.

`ChunkWorker(backend, options)` builds the backend from plain options (`engine.backends`); the
model loads on `warm_up` (or the first batch) and stays loaded. `transcribe(items)` takes a batch
of `(file key, audio ref, chunk)` items, fetches each file's audio from Ray's object store (a
node fetches an object once and shares it between its workers), and runs the backend's batched
decode over the batch, returning `(file key, ChunkResult)` per item in any order: one decode
stream across files when the backend has `transcribe_pieces` (VibeVoice: the batch refills
across files), else one call per file (whisper). The class is plain Python;
`engine.distributed.cluster` turns it into an actor with its resources.
"""

from __future__ import annotations

import os
import time
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from engine.backends import create_backend
from engine.backends.base import pieces_of
from engine.types import Chunk, ChunkResult, Recording

Item = tuple[Hashable, Any, Chunk]  # (file key, ObjectRef of the file's samples, chunk)


class ChunkWorker:
    def __init__(self, backend: str, options: dict[str, Any]) -> None:
        self.backend = create_backend(backend, **options)

    def pid(self) -> int:
        """The worker's process id (what a supervisor or a test would signal)."""
        return os.getpid()

    def cpu_seconds(self) -> float:
        """CPU time this worker process has used (what a benchmark compares with wall time)."""
        return time.process_time()

    def warm_up(self) -> str:
        """Load the model on one second of silence; the backend's description."""
        rate = self.backend.sample_rate
        recording = Recording(np.zeros(rate, dtype=np.float32), rate)
        list(self.backend.transcribe(recording, [Chunk(index=0, start=0.0, end=1.0)]))
        return self.backend.describe()

    def transcribe(self, items: Sequence[Item]) -> list[tuple[Hashable, ChunkResult]]:
        import ray

        groups: dict[Hashable, tuple[Any, list[Chunk]]] = {}
        for file, ref, chunk in items:
            groups.setdefault(file, (ref, []))[1].append(chunk)
        rate = self.backend.sample_rate
        # (T,) float32 samples, read-only, shared with the node's object store
        recordings = {file: Recording(ray.get(ref), rate) for file, (ref, _) in groups.items()}
        many = pieces_of(self.backend)
        if many is not None:  # one decode stream for the whole batch, refilled across files
            pieces = [(recordings[f], c) for f, (_, chunks) in groups.items() for c in chunks]
            owner = {id(c): f for f, (_, chunks) in groups.items() for c in chunks}
            return [(owner[id(res.chunk)], res) for res in many(pieces)]  # results carry their chunk
        results: list[tuple[Hashable, ChunkResult]] = []
        for file, (_, chunks) in groups.items():
            results.extend((file, r) for r in self.backend.transcribe(recordings[file], chunks))
        return results
