"""Diarization: who speaks when. The `Diarizer` interface and the result types it returns.

Contract:
- `Diarizer.diarize(recording, speech, count, on_progress, cancel)` returns a `Diarization`: speaker
  turns in absolute seconds with labels that are consistent over the whole recording (labels are
  opaque strings; stitching renames them). `speech` is the pipeline's VAD output, which a diarizer
  may reuse. The recording may be at any sample rate. `on_progress(done, total)` reports work done;
  `cancel` is checked between units of work and answered with `engine.errors.Cancelled`.
- Turns of different speakers may overlap (overlapping speech); a diarizer that cannot detect
  overlap simply never produces it.
- A `SpeakerEmbedder` can also embed arbitrary stretches of the recording; reconciliation of
  model-labelled chunks uses it when the chosen diarizer offers it.
- `SpeakerCount` carries the user's knowledge of the number of speakers (exact, or bounds).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from engine.types import Recording, SpeechSegment

ProgressFn = Callable[[float, float], None]  # (done, total), in any unit


@dataclass(frozen=True, slots=True, order=True)
class SpeakerTurn:
    """One speaker talking over [start, end], absolute seconds."""

    start: float
    end: float
    speaker: str

    def __post_init__(self) -> None:
        if not self.end >= self.start >= 0:
            raise ValueError(f"invalid speaker turn [{self.start}, {self.end}]")

    @property
    def duration(self) -> float:
        return self.end - self.start

    def overlap(self, start: float, end: float) -> float:
        """Seconds this turn shares with [start, end]."""
        return max(0.0, min(self.end, end) - max(self.start, start))


@dataclass(frozen=True, slots=True)
class Diarization:
    """Speaker turns of a whole recording, ordered by start."""

    turns: tuple[SpeakerTurn, ...]

    def __post_init__(self) -> None:
        if any(b < a for a, b in zip(self.turns, self.turns[1:], strict=False)):
            object.__setattr__(self, "turns", tuple(sorted(self.turns)))

    @property
    def speakers(self) -> tuple[str, ...]:
        """Labels in order of first appearance."""
        return tuple(dict.fromkeys(t.speaker for t in self.turns))

    def speaking_time(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for t in self.turns:
            totals[t.speaker] = totals.get(t.speaker, 0.0) + t.duration
        return totals

    def overlaps(self, start: float, end: float) -> dict[str, float]:
        """Seconds each speaker talks within [start, end] (speakers with none are left out)."""
        found: dict[str, float] = {}
        for t in self.turns:
            if t.start >= end:
                break
            shared = t.overlap(start, end)
            if shared > 0:
                found[t.speaker] = found.get(t.speaker, 0.0) + shared
        return found


@dataclass(frozen=True, slots=True)
class SpeakerCount:
    """What the user knows about the number of speakers: exact, or bounds (None: unknown)."""

    exact: int | None = None
    minimum: int | None = None
    maximum: int | None = None

    def __post_init__(self) -> None:
        for name, value in (
            ("speakers", self.exact),
            ("min speakers", self.minimum),
            ("max speakers", self.maximum),
        ):
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        if self.minimum and self.maximum and self.minimum > self.maximum:
            raise ValueError(f"min speakers ({self.minimum}) exceeds max speakers ({self.maximum})")
        if self.exact is not None and (self.minimum or self.maximum):
            raise ValueError("give either an exact number of speakers or bounds, not both")

    def clamp(self, n: int) -> int:
        """`n` brought within what the user said."""
        if self.exact is not None:
            return self.exact
        if self.minimum is not None:
            n = max(n, self.minimum)
        if self.maximum is not None:
            n = min(n, self.maximum)
        return n


@runtime_checkable
class Diarizer(Protocol):
    name: str

    def load(self) -> None:
        """Load the model now (raising `ModelLoadError`), so a missing model is reported before
        a long inference rather than after it."""
        ...

    def diarize(
        self,
        recording: Recording,
        speech: Sequence[SpeechSegment],
        count: SpeakerCount | None = None,
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> Diarization:
        """Who speaks when, over the whole recording."""
        ...


@runtime_checkable
class SpeakerEmbedder(Protocol):
    def embed_spans(
        self,
        recording: Recording,
        spans: Sequence[Sequence[tuple[float, float]]],
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> list[np.ndarray | None]:
        """One unit-length embedding per group of (start, end) spans; None for a group with no audio."""
        ...
