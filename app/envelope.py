"""Min/max envelope pyramid of a recording, for drawing hours of audio fast at any zoom (no Qt).

`EnvelopePyramid.build(samples, sample_rate)` precomputes, once, the minimum and maximum of every
block of `base_block` samples, then of every `factor` blocks of that level, and so on up to a few
hundred bins. `window(t0, t1, max_bins)` answers a view request from the coarsest level that still
has at least `max_bins` bins in the window (so at most `factor × max_bins` bins come back); below
the finest level it reduces the window's samples on the fly (at most `base_block × max_bins` of
them), and it returns the raw samples when the window holds fewer than `2 × max_bins` of them. Memory is about
`2 × 4 / base_block × 4/3` bytes per sample (≈ 22 MB for three hours at 16 kHz with the defaults).
`extended(samples)` is the pyramid of a signal that grew (these samples, then more): only the bins
the new samples reach are computed, so a recording's waveform redraws at the cost of what was
added, not of the hour already recorded (equal, value for value, to `build` of the whole).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True, slots=True, eq=False)
class Envelope:
    """What a view draws: for each bin its start time (s), minimum and maximum.

    With `raw` the values are the samples themselves (mins == maxs) and `times` their instants.
    `step` is the bin width in seconds.
    """

    times: np.ndarray  # (N,) float64
    mins: np.ndarray  # (N,) float32
    maxs: np.ndarray  # (N,) float32
    step: float
    raw: bool


@dataclass(frozen=True, slots=True, eq=False)
class EnvelopeLevel:
    block: int  # samples per bin
    mins: np.ndarray  # (bins,) float32
    maxs: np.ndarray  # (bins,) float32


@dataclass(frozen=True, slots=True, eq=False)
class EnvelopePyramid:
    samples: np.ndarray  # (T,) float32, kept by reference for the deepest zoom
    sample_rate: int
    levels: tuple[EnvelopeLevel, ...]  # finest first
    factor: int = 4  # bins of a level per bin of the next
    min_bins: int = 256  # levels are added while the coarsest has more bins than this

    @classmethod
    def build(
        cls,
        samples: np.ndarray,
        sample_rate: int,
        base_block: int = 64,
        factor: int = 4,
        min_bins: int = 256,
    ) -> EnvelopePyramid:
        if samples.ndim != 1:
            raise ValueError(f"samples must be 1-D, got shape {samples.shape}")
        if sample_rate <= 0 or base_block < 1 or factor < 2:
            raise ValueError("sample rate and block must be positive and the factor at least 2")
        mins, maxs = _reduce(samples, samples, base_block)
        levels = [EnvelopeLevel(base_block, mins, maxs)]
        while len(levels[-1].mins) > min_bins:
            top = levels[-1]
            mins, _ = _reduce(top.mins, top.mins, factor)
            _, maxs = _reduce(top.maxs, top.maxs, factor)
            levels.append(EnvelopeLevel(top.block * factor, mins, maxs))
        return cls(samples, int(sample_rate), tuple(levels), factor, min_bins)

    def extended(self, samples: np.ndarray) -> EnvelopePyramid:
        """The pyramid of `samples`, which begin with this pyramid's samples."""
        if samples.ndim != 1 or len(samples) < len(self.samples):
            raise ValueError("extended() takes this pyramid's samples followed by new ones")
        below: tuple[np.ndarray, np.ndarray] = (samples, samples)
        stable, block, levels = len(self.samples), self.levels[0].block, []  # stable: inputs unchanged
        while not levels or len(levels[-1].mins) > self.min_bins:
            old = self.levels[len(levels)] if len(levels) < len(self.levels) else None
            keep = min(stable // block, len(old.mins)) if old is not None else 0  # whole, unchanged bins
            mins, _ = _reduce(below[0][keep * block :], below[0][keep * block :], block)
            _, maxs = _reduce(below[1][keep * block :], below[1][keep * block :], block)
            if old is not None:
                mins, maxs = np.concatenate((old.mins[:keep], mins)), np.concatenate((old.maxs[:keep], maxs))
            size = block if not levels else levels[-1].block * block
            levels.append(EnvelopeLevel(size, mins, maxs))
            below, stable, block = (mins, maxs), keep, self.factor
        return replace(self, samples=samples, levels=tuple(levels))

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate

    def window(self, t0: float, t1: float, max_bins: int) -> Envelope:
        """The envelope between `t0` and `t1` seconds with about `max_bins` to `4·max_bins` bins."""
        if max_bins < 1:
            raise ValueError("max_bins must be at least 1")
        n = len(self.samples)
        a = min(max(int(np.floor(t0 * self.sample_rate)), 0), n)
        b = min(max(int(np.ceil(t1 * self.sample_rate)), a), n)
        if b - a <= 2 * max_bins:
            values = self.samples[a:b]
            times = np.arange(a, b, dtype=np.float64) / self.sample_rate
            return Envelope(times, values, values, 1.0 / self.sample_rate, raw=True)
        if (b - a) / self.levels[0].block < max_bins:  # finer than the pyramid: reduce samples now
            block = max((b - a) // max_bins, 1)
            a = a // block * block
            mins, maxs = _reduce(self.samples[a:b], self.samples[a:b], block)
            times = a / self.sample_rate + np.arange(len(mins)) * (block / self.sample_rate)
            return Envelope(times, mins, maxs, block / self.sample_rate, raw=False)
        level = self._level_for(b - a, max_bins)
        i0, i1 = a // level.block, -(-b // level.block)
        times = np.arange(i0, i1, dtype=np.float64) * (level.block / self.sample_rate)
        step = level.block / self.sample_rate
        return Envelope(times, level.mins[i0:i1], level.maxs[i0:i1], step, raw=False)

    def _level_for(self, span: int, max_bins: int) -> EnvelopeLevel:
        chosen = self.levels[0]
        for level in self.levels:
            if span / level.block >= max_bins:
                chosen = level
        return chosen


def _reduce(low: np.ndarray, high: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Minimum of `low` and maximum of `high` over consecutive blocks (the last one may be short)."""
    whole = len(low) // block * block
    mins = low[:whole].reshape(-1, block).min(axis=1) if whole else np.zeros(0, low.dtype)
    maxs = high[:whole].reshape(-1, block).max(axis=1) if whole else np.zeros(0, high.dtype)
    if whole < len(low):
        mins = np.append(mins, low[whole:].min())
        maxs = np.append(maxs, high[whole:].max())
    return mins.astype(np.float32, copy=False), maxs.astype(np.float32, copy=False)
