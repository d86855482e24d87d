"""`Transcriber`: what callers of a pipeline use, whether it runs here or on a Murmur server.

`engine.pipeline.Pipeline` runs the stages in this process; `engine.remote.pipeline.RemotePipeline`
decodes the audio here and leaves the rest to a server. The CLI, the app's worker and
re-transcribing a selection take either through this one protocol.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from engine.pipeline import Prepared, ProgressCallback
from engine.types import Recording, Transcript


@runtime_checkable
class Transcriber(Protocol):
    backend: Any  # what a caller may ask of it: `sample_rate`, `describe()`

    def check_ready(self) -> None:
        """Raise now, before any work, when the run can be told to fail (a server that is down)."""
        ...

    def load(
        self, path: str | Path, on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Recording: ...  # fmt: skip

    def prepare(
        self, source: str | Path | Recording, on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Prepared: ...  # fmt: skip

    def transcribe(
        self, prepared: Prepared, on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Transcript: ...  # fmt: skip

    def run(
        self, source: str | Path | Recording, on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Transcript:
        """`prepare` then `transcribe`, after `check_ready`."""
        ...
