"""Progress bookkeeping shared by the CLI and the GUI: stage timing and ETA.

`EtaTracker.update(progress)` returns the estimated seconds left in the current stage (None while
too little is known). It is pure bookkeeping over a clock, so it is tested without sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from engine.types import Progress, Stage


@dataclass(slots=True)
class EtaTracker:
    clock: Callable[[], float] = time.monotonic
    min_fraction: float = 0.02  # below this, an estimate would be noise
    _stage: Stage | None = None
    _stage_started: float = 0.0
    _first_fraction: float = 0.0

    def update(self, progress: Progress) -> float | None:
        now = self.clock()
        if progress.stage != self._stage:
            self._stage, self._stage_started = progress.stage, now
            self._first_fraction = progress.fraction
            return None
        done = progress.fraction - self._first_fraction
        if done < self.min_fraction:
            return None
        rate = done / max(now - self._stage_started, 1e-9)
        return (1.0 - progress.fraction) / rate


def format_clock(seconds: float) -> str:
    """`h:mm:ss` (or `m:ss` under an hour) for durations and ETAs."""
    seconds = max(0, round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
