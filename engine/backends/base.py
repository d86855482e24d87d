"""The one small interface every transcription backend implements.

A backend turns chunks of a recording into `ChunkResult`s with chunk-relative times and
chunk-local speaker ids. It loads its model lazily (on first use) and keeps it loaded, so a
pipeline can run many recordings. Results are yielded as soon as each chunk is done, in any
order; `cancel` is checked between units of work and answered with `engine.errors.Cancelled`.

Beyond `Backend`, a backend may offer optional hooks, declared here once (`HOOKS`) and asked for
only through the functions below, each with the default a backend without it gets: `check_ready()`
(fail before any work), `packs_at_pauses` (windows filled up to short pauses), `load()` (load the
model now), `variant(**changes)` (the same loaded model with other decoding settings) and
`transcribe_pieces(pieces)` (chunks of several recordings in one decode stream).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from engine.errors import check_cancel
from engine.types import Chunk, ChunkResult, Recording

__all__ = ["HOOKS", "Backend", "check_cancel", "check_ready", "load_now", "packs_at_pauses", "pieces_of",
           "variant_of"]  # check_cancel lives in engine.errors; kept here for backends  # fmt: skip
HOOKS = ("check_ready", "packs_at_pauses", "load", "variant", "transcribe_pieces")


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


def check_ready(backend: Any) -> None:
    """Raise now when the backend can tell it will fail (a server down, a checkpoint missing)."""
    hook = getattr(backend, "check_ready", None)
    if hook is not None:
        hook()


def packs_at_pauses(backend: Any) -> bool:
    """Whether the backend's windows are filled up to short pauses inside speech (whisper)."""
    return bool(getattr(backend, "packs_at_pauses", False))


def load_now(backend: Any) -> None:
    """Load the backend's model now instead of on first use (no-op without the hook)."""
    hook = getattr(backend, "load", None)
    if callable(hook):
        hook()


def variant_of(backend: Any, **changes: Any) -> Any:
    """The same loaded model with other decoding settings, or the backend itself without the hook."""
    hook = getattr(backend, "variant", None)
    return hook(**changes) if hook is not None else backend


def pieces_of(backend: Any) -> Callable[[Sequence[tuple[Recording, Chunk]]], Iterator[ChunkResult]] | None:
    """The backend's one-stream decode of chunks from several recordings, or None."""
    hook: Callable[[Sequence[tuple[Recording, Chunk]]], Iterator[ChunkResult]] | None
    hook = getattr(backend, "transcribe_pieces", None)
    return hook
