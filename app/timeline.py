"""Time arithmetic the views share, free of Qt: clock strings, hit-testing, visible spans.

- `format_time(t)` "1:02:03.4" / "2:03.4"; `format_axis(t, spacing)` an axis label precise enough
  for the tick spacing; `time_ticks(span, pixels)` tick steps a clock reader expects (1, 2, 5,
  10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1 h…), never decimal steps such as 1,000 s;
  `parse_time("1:02:03.4")` the inverse (also "83.5", "1:23"), ValueError else.
- `utterance_at(starts, ends, t)` the index of the utterance playing at `t` (or None);
  `nearest_utterance` the one whose span is closest to `t`.
- `visible_spans(starts, ends, t0, t1, min_width)` the spans intersecting a view, neighbours
  closer than `min_width` merged, so drawing stays cheap however many spans there are.
- `place_labels(bars, t0, spp, widths)` where labels of bars fit: inside their bar, never
  touching the previous label (those that do not fit are left out).
- `grown_span(duration)` the width a recording in progress is shown at: steps of 30 s, 1, 2, 5,
  10, 20, 30 min and 1 h, then whole hours (the view rescales a few times an hour).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

import numpy as np


def format_time(seconds: float, decimals: int = 1) -> str:
    """`h:mm:ss.d` (hours only when needed), rounded to `decimals` places."""
    scale = 10**decimals
    total = max(0, round(seconds * scale))
    whole, frac = divmod(total, scale)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    text = f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
    return f"{text}.{frac:0{decimals}d}" if decimals else text


def format_axis(seconds: float, spacing: float) -> str:
    """An axis label: whole seconds when ticks are ≥ 1 s apart, else tenths or hundredths."""
    decimals = 0 if spacing >= 1 else 1 if spacing >= 0.1 else 2
    return format_time(seconds, decimals)


CLOCK_STEPS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30,
               60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)  # fmt: skip
LABEL_PIXELS = 90  # room one "1:02:03" label needs


def time_ticks(span: float, pixels: float) -> list[tuple[float, float]]:
    """[(major step, 0), (minor step, 0)] for an axis showing `span` seconds over `pixels`:
    the smallest clock step that leaves each major label `LABEL_PIXELS`, and the largest
    smaller step that divides it (none when no step is smaller)."""
    if span <= 0 or pixels <= 0:
        return []
    most = max(pixels / LABEL_PIXELS, 2.0)
    major = next((s for s in CLOCK_STEPS if span / s <= most), CLOCK_STEPS[-1])
    minors = [s for s in CLOCK_STEPS if s < major and round(major / s, 6).is_integer()]
    return [(major, 0.0), (minors[-1], 0.0)] if minors else [(major, 0.0)]


def parse_time(text: str) -> float:
    """Seconds from "h:mm:ss.s", "m:ss.s" or "s.s"; ValueError for anything else."""
    parts = text.strip().split(":")
    if not 1 <= len(parts) <= 3 or any(not p.strip() for p in parts):
        raise ValueError(f"not a time: {text!r} (use h:mm:ss.s)")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"not a time: {text!r} (use h:mm:ss.s)") from None
    if any(v < 0 or not math.isfinite(v) for v in values):
        raise ValueError(f"not a time: {text!r}")
    if any(v >= 60 for v in values[1:]):
        raise ValueError(f"minutes and seconds must be under 60 in {text!r}")
    seconds = 0.0
    for v in values:
        seconds = seconds * 60 + v
    return seconds


def utterance_at(starts: Sequence[float], ends: Sequence[float], t: float, lookback: int = 16) -> int | None:
    """Index of the last utterance with start ≤ t < end (starts sorted), or None.

    Overlapping utterances are found when they are among the `lookback` latest starts before `t`.
    """
    last = bisect.bisect_right(starts, t) - 1
    for i in range(last, max(last - lookback, -1), -1):
        if t < ends[i]:
            return i
    return None


def nearest_utterance(starts: Sequence[float], ends: Sequence[float], t: float) -> int | None:
    """The utterance playing at `t`, else the one whose span is nearest to `t` (None if empty)."""
    if not starts:
        return None
    hit = utterance_at(starts, ends, t)
    if hit is not None:
        return hit
    i = bisect.bisect_right(starts, t)
    candidates = [j for j in (i - 1, i) if 0 <= j < len(starts)]
    return min(candidates, key=lambda j: max(starts[j] - t, t - ends[j], 0.0))


def visible_spans(
    starts: np.ndarray, ends: np.ndarray, t0: float, t1: float, min_width: float
) -> tuple[np.ndarray, np.ndarray]:
    """Spans (sorted by start, non-overlapping) that intersect [t0, t1], with gaps below
    `min_width` closed and each span at least `min_width` wide."""
    if len(starts) == 0:
        return starts, ends
    first = max(int(np.searchsorted(ends, t0, side="left")), 0)
    last = int(np.searchsorted(starts, t1, side="right"))
    s, e = starts[first:last], ends[first:last]
    if len(s) == 0 or min_width <= 0:
        return s, e
    e = np.maximum(e, s + min_width)
    keep = np.ones(len(s), dtype=bool)
    keep[1:] = s[1:] - e[:-1] >= min_width  # a span starting a new group
    group = np.cumsum(keep) - 1
    merged_end = np.zeros(int(group[-1]) + 1)
    np.maximum.at(merged_end, group, e)
    return s[keep], merged_end


def place_labels(bars: Sequence[tuple[float, float]], t0: float, spp: float, widths: Sequence[float],
                 gap: float = 6.0) -> list[tuple[int, float]]:  # fmt: skip
    """(bar index, x in seconds) for each label that fits inside its bar (`widths` in pixels,
    `spp` seconds per pixel) without coming within `gap` pixels of the label before it."""
    placed: list[tuple[int, float]] = []
    right = -math.inf
    for i, ((start, end), width) in enumerate(zip(bars, widths, strict=True)):
        x = max(start, t0)
        if width <= (end - x) / spp - 8 and (x - right) / spp >= gap:
            placed.append((i, x))
            right = x + width * spp
    return placed


GROW_STEPS = (30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0)  # seconds


def grown_span(duration: float) -> float:
    """The width a recording in progress of `duration` seconds is shown at: the first of
    `GROW_STEPS` that holds it, past an hour the next whole hour."""
    for step in GROW_STEPS:
        if duration <= step:
            return step
    return math.ceil(duration / 3600.0) * 3600.0
