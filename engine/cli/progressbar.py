"""A terminal progress display for pipeline `Progress` reports: stage, bar, percent, ETA.

On a terminal it redraws one line in place; elsewhere (logs, CI) it prints one line per stage.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from engine.progress import EtaTracker, format_clock
from engine.types import Progress, Stage

LABELS = {
    Stage.LOAD: "decoding",
    Stage.VAD: "finding speech",
    Stage.CHUNK: "chunking",
    Stage.INFER: "transcribing",
    Stage.SPEAKERS: "speakers",
    Stage.STITCH: "stitching",
    Stage.EXPORT: "exporting",
}


class ProgressBar:
    def __init__(self, stream: TextIO = sys.stderr, width: int = 28, enabled: bool = True) -> None:
        self.stream = stream
        self.width = width
        self.enabled = enabled
        self.live = enabled and stream.isatty()
        self.eta = EtaTracker()
        self._stage: Stage | None = None
        self._last_draw = 0.0

    def __call__(self, progress: Progress) -> None:
        if not self.enabled:
            return
        eta = self.eta.update(progress)
        new_stage = progress.stage != self._stage
        if new_stage and self.live and self._stage is not None:
            self.stream.write("\n")
        self._stage = progress.stage
        if self.live:
            now = time.monotonic()
            if new_stage or progress.fraction >= 1.0 or now - self._last_draw > 0.1:
                self._last_draw = now
                self.stream.write("\r" + self.render(progress, eta))
                self.stream.flush()
        elif new_stage:
            self.stream.write(f"{LABELS[progress.stage]}…\n")
            self.stream.flush()

    def render(self, progress: Progress, eta: float | None) -> str:
        filled = round(self.width * progress.fraction)
        bar = "█" * filled + "·" * (self.width - filled)
        tail = f" ETA {format_clock(eta)}" if eta is not None and progress.fraction < 1 else ""
        detail = f" {progress.detail}" if progress.detail else ""
        line = f"{LABELS[progress.stage]:<15} {bar} {progress.fraction:4.0%}{tail}{detail}"
        return line[:110].ljust(110)

    def close(self) -> None:
        if self.live and self._stage is not None:
            self.stream.write("\n")
            self.stream.flush()
