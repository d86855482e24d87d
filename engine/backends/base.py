"""The one small interface every transcription backend implements.

A backend turns chunks of a recording into `ChunkResult`s with chunk-relative times and
chunk-local speaker ids. It loads its model lazily (on first use) and keeps it loaded, so a
pipeline can run many recordings. Results are yielded as soon as each chunk is done, in any
order; `cancel` is checked between units of work and answered with `engine.errors.Cancelled`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

from engine.errors import check_cancel
from engine.types import Chunk, ChunkResult, Recording

__all__ = ["Backend", "check_cancel"]  # check_cancel lives in engine.errors; kept here for backends


@runtime_checkable
class Backend(Protocol):
    """Chunks in, chunk results out."""

    name: str
    sample_rate: int  # the audio rate the backend consumes (Hz)
    default_chunk_seconds: float  # the chunk size the backend is designed for
    max_chunk_seconds: float  # the longest input the model can take in one pass
    labels_speakers: bool  # True when the model itself assigns (chunk-local) speakers

    def describe(self) -> str:
        """A short human-readable description of the model in use (for transcripts and logs)."""
        ...

    def transcribe(
        self,
        recording: Recording,
        chunks: Sequence[Chunk],
        cancel: threading.Event | None = None,
    ) -> Iterator[ChunkResult]:
        """Yield one result per chunk. `recording.sample_rate` equals `self.sample_rate`."""
        ...
