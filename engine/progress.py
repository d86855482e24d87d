"""Progress bookkeeping shared by the CLI and the GUI: stage timing and ETA.

`EtaTracker.update(progress)` returns the estimated seconds left in the current stage (None while
too little is known). `StageTimes` records how long each stage took, from the progress reports
alone (a stage lasts from its first report to the next stage's first report). Both are pure
bookkeeping over a clock, so they are tested without sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

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


@dataclass(slots=True)
class StageTimes:
    """Seconds per stage of one run, measured from its `Progress` reports (call it with each)."""

    clock: Callable[[], float] = time.perf_counter
    _marks: list[tuple[Stage, float]] = field(default_factory=list)
    _ended: float | None = None

    def __call__(self, progress: Progress) -> None:
        if not self._marks or self._marks[-1][0] != progress.stage:
            self._marks.append((progress.stage, self.clock()))

    def stop(self) -> None:
        """The run is over: the last stage ends now."""
        self._ended = self.clock()

    def seconds(self) -> dict[Stage, float]:
        """Seconds spent in each stage (a stage reported twice, apart, is summed)."""
        end = self._ended if self._ended is not None else self.clock()
        bounds = [t for _, t in self._marks[1:]] + [end]
        out: dict[Stage, float] = {}
        for (stage, began), ended in zip(self._marks, bounds, strict=True):
            out[stage] = out.get(stage, 0.0) + ended - began
        return out

    def render(self) -> str:
        """`load 0.3 s · vad 2.0 s · …` in stage order."""
        parts = [f"{stage.value} {s:.2f} s" for stage, s in self.seconds().items()]
        return " · ".join(parts)


def format_clock(seconds: float) -> str:
    """`h:mm:ss` (or `m:ss` under an hour) for durations and ETAs."""
    seconds = max(0, round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
