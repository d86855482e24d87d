"""What one row keeps at each decode step, per layer group, on the plain timeline.

A row is `[sys1 | S speech tokens | sys2 | outputs]`; decode step `j` feeds output token `j`
(absolute position `prompt_len + j`). System tokens always stay. Outputs keep the first `n_sink`
and the last `out_window` (fed one included; `out_window == 0`: all). Speech keeps, per layer
group, its first `sinks` tokens and the range `[lo, hi)` a `SpeechRule` gives (speech indices):

- `keep`: everything;
- `front` (the authors' schedule): nothing is dropped while `t = j + 1 ≤ delay`; then the first
  `min(⌊rate·(t − delay)⌋, cap)` tokens after the sinks are gone, `cap = S − sink − window`, so
  the last `window` speech tokens always stay; with a `span` shorter than S (the authors' batch
  minimum: the shortest speech span of the batch) `cap = span − sink − window`, so the row drops
  what the batch's shortest row drops and keeps the rest;
- `follow`: a window of `window` tokens after the sinks, at the start for `delay` steps, then
  advancing `rate` tokens per step until it reaches the end (it brings tokens back in);
- `anchor`: everything from `front` on, `front = clip(anchor − back, sinks, S − ahead)` where
  `anchor` is the speech index the transcript no longer needs audio before (`anchor.py`; −1: none yet).

A row is sized before its anchor is known (`RowLayout.capacity`), for a transcript that moves evenly
through the speech over its token budget with the anchor `anchor_lag` tokens behind it: the larger
of a share `ANCHOR_LAG` of the speech and the span the anchor really trails by, `anchor_trail(turn)`.
The anchor is the earliest Start of the last `ANCHOR_RECENT` closed segments, so while the next one
is written it trails the text by `ANCHOR_RECENT + 1` segments (four 3.6 s turns on a 36 s clip).

`lo` and `hi` never decrease. Functions take numpy arrays of steps so the planner can evaluate
whole runs; `RowLayout` binds a request's lengths to the rules of its layer groups.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

IntArray = NDArray[np.int64]
SPEECH_KINDS = ("keep", "front", "follow", "anchor")
# How far the anchor is planned to trail a transcript that moves evenly through the audio, at least,
# as a share of the speech (15 s of a 300 s chunk: 113 tokens). Rows are sized from this plan; a row
# whose transcript lags further makes the store grow (`Runner.make_room`).
ANCHOR_LAG = 0.05
ANCHOR_RECENT = 3  # closed segments whose earliest Start is the anchor (`anchor.GuardedAnchor`)


def anchor_trail(turn: int) -> int:
    """Speech tokens the anchor trails the text by when segments last `turn` tokens: it is the
    Start of the earliest of the last `ANCHOR_RECENT` closed segments, and one more is being written."""
    return (ANCHOR_RECENT + 1) * turn


@dataclass(frozen=True, slots=True)
class SpeechRule:
    """How one layer group evicts speech (see the module docstring)."""

    kind: str = "keep"
    sink: int = 0  # speech sinks: the first speech tokens, always kept
    window: int = 0  # front: speech tokens that always stay at the end; follow: window size
    delay: int = 0  # front / follow: steps before anything moves
    rate: float = 0.0  # front / follow: speech tokens per step afterwards
    back: int = 0  # anchor: look-back before the anchor
    ahead: int = 0  # anchor: look-ahead kept past the anchor at the end of the audio
    span: int = 0  # front: speech span the cap comes from when shorter (batch minimum); 0: the row's
    lag: int = 0  # anchor: speech tokens the planned anchor trails the text by at least (`anchor_trail`)

    def __post_init__(self) -> None:
        if self.kind not in SPEECH_KINDS:
            raise ValueError(f"unknown speech rule {self.kind!r}")
        if (
            min(self.sink, self.window, self.delay, self.back, self.ahead, self.span, self.lag) < 0
            or not self.rate >= 0
        ):
            raise ValueError("speech sinks, window, delay, rate and margins must not be negative")

    @property
    def evicts(self) -> bool:
        return self.kind != "keep"

    def bounds(self, j: ArrayLike, length: int, anchor: ArrayLike = -1) -> tuple[int, IntArray, IntArray]:
        """(sinks, lo, hi) at steps `j`: speech indices [0, sinks) and [lo, hi) stay."""
        j = np.asarray(j, dtype=np.int64)
        sinks = min(self.sink, length) if self.evicts else 0
        full = np.full(j.shape, length, dtype=np.int64)
        if self.kind == "front":
            cap = front_cap(self, length)
            dropped = np.floor(self.rate * np.maximum(j + 1 - self.delay, 0)).astype(np.int64)
            return sinks, sinks + np.minimum(dropped, cap), full
        if self.kind == "follow":
            room = length - sinks
            size = min(self.window, room) if self.window else room
            moved = np.floor(self.rate * np.maximum(j - self.delay + 1, 0)).astype(np.int64)
            lo = sinks + np.clip(moved, 0, room - size)
            return sinks, lo, lo + size
        if self.kind == "anchor":
            a = np.asarray(anchor, dtype=np.int64)
            top = max(sinks, length - self.ahead)
            lo = np.clip(np.where(a >= 0, a - self.back, sinks), sinks, top)
            return sinks, np.broadcast_to(lo, j.shape).astype(np.int64), full
        return 0, np.zeros(j.shape, dtype=np.int64), full


def front_cap(rule: SpeechRule, length: int) -> int:
    """Most speech tokens `front` drops from a row of `length`: `span − sink − window`, span the
    row's own length or the rule's shorter `span` (the authors' batch minimum)."""
    span = min(rule.span, length) if rule.span else length
    return max(span - min(rule.sink, span) - rule.window, 0)


def speech_at(rule: SpeechRule, j: int, length: int, anchor: int = -1) -> tuple[int, int]:
    """`rule.bounds` for one step, in plain ints (the per-step path): (lo, hi)."""
    if not rule.evicts:
        return 0, length
    sinks = min(rule.sink, length)
    if rule.kind == "front":
        dropped = math.floor(rule.rate * max(j + 1 - rule.delay, 0))
        return sinks + min(dropped, front_cap(rule, length)), length
    if rule.kind == "follow":
        room = length - sinks
        size = min(rule.window, room) if rule.window else room
        lo = sinks + min(max(math.floor(rule.rate * max(j - rule.delay + 1, 0)), 0), room - size)
        return lo, lo + size
    top = max(sinks, length - rule.ahead)
    return min(max(anchor - rule.back if anchor >= 0 else sinks, sinks), top), length


def outputs_kept(j: ArrayLike, n_sink: int, out_window: int) -> IntArray:
    """Output tokens a step holds (the fed one included)."""
    seen = np.asarray(j, dtype=np.int64) + 1
    return np.minimum(seen, n_sink + out_window) if out_window else seen


@dataclass(frozen=True, slots=True)
class RowLayout:
    """One request under one eviction setting."""

    prompt_len: int  # P, speech included
    speech_start: int  # s0: prompt position of the first speech token
    speech_len: int  # S
    max_new_tokens: int
    n_sink: int = 0  # output sinks (0 without output eviction)
    out_window: int = 0  # recent outputs kept; 0: outputs are never evicted
    rules: tuple[SpeechRule, ...] = (SpeechRule(),)  # one per layer group
    layer_group: tuple[int, ...] = (0,)  # group of each layer
    unanchored: bool = False  # anchored groups planned with no anchor ever: all their speech stays

    def __post_init__(self) -> None:
        if not 0 <= self.speech_start <= self.speech_start + self.speech_len <= self.prompt_len:
            raise ValueError("the speech span must lie inside the prompt")
        if self.n_sink < 0 or self.out_window < 0:
            raise ValueError("output sinks and window must not be negative")
        if not self.layer_group or not set(self.layer_group) <= set(range(len(self.rules))):
            raise ValueError("every layer must belong to one of the layout's groups")

    @property
    def groups(self) -> int:
        return len(self.rules)

    @property
    def layers(self) -> int:
        return len(self.layer_group)

    @property
    def group_weights(self) -> NDArray[np.float64]:
        """Share of the layers in each group (G,)."""
        counts = np.bincount(np.asarray(self.layer_group), minlength=self.groups)
        return counts / counts.sum()

    @property
    def follows(self) -> bool:
        """Whether some group brings speech back in (it needs a copy of the whole speech KV)."""
        return any(rule.kind == "follow" for rule in self.rules)

    @property
    def anchored(self) -> bool:
        return any(rule.kind == "anchor" for rule in self.rules)

    def speech(self, group: int, j: ArrayLike, anchor: ArrayLike = -1) -> tuple[int, IntArray, IntArray]:
        return self.rules[group].bounds(j, self.speech_len, anchor)

    def speech_kept(self, j: int, anchor: int = -1) -> list[tuple[int, int, int]]:
        """(sinks, lo, hi) of every evicting group at step j, in plain ints."""
        length = self.speech_len
        return [(min(r.sink, length), *speech_at(r, j, length, anchor)) for r in self.rules if r.evicts]

    def counts(self, group: int, j: ArrayLike, anchor: ArrayLike = -1) -> IntArray:
        """Entries a step holds in one group (its visible prefix length)."""
        sinks, lo, hi = self.speech(group, j, anchor)
        system = self.prompt_len - self.speech_len
        return system + sinks + (hi - lo) + outputs_kept(j, self.n_sink, self.out_window)

    @property
    def anchor_lag(self) -> int:
        """Speech tokens the planned anchor trails the text by: a share `ANCHOR_LAG` of the speech or
        the anchored rules' `lag`, the larger."""
        trail = max((rule.lag for rule in self.rules if rule.kind == "anchor"), default=0)
        return max(math.ceil(ANCHOR_LAG * self.speech_len), trail)

    def planned_anchor(self, j: ArrayLike) -> IntArray:
        """The anchor at steps `j` of a transcript that moves evenly through the speech over the
        row's token budget, `anchor_lag` tokens behind it (−1: none yet)."""
        j = np.asarray(j, dtype=np.int64)
        ahead = (self.speech_len * (j + 1)) // max(self.max_new_tokens, 1) - self.anchor_lag
        return np.where(ahead >= 0, ahead, -1)

    def peak(self, group: int) -> int:
        """Most entries the group ever holds, the prompt alone (step -1) included; an anchored group
        under `planned_anchor` (none when `unanchored`)."""
        j = np.arange(-1, self.max_new_tokens)
        return int(self.counts(group, j, -1 if self.unanchored else self.planned_anchor(j)).max())

    @property
    def capacity(self) -> int:
        """Slots this row is sized with in the store: what its policy keeps at most (anchored rows:
        under the planned anchor; one that keeps more makes room as it goes)."""
        return max(self.peak(g) for g in range(self.groups))

    def kept_fraction(self, j: ArrayLike, anchor: ArrayLike = -1) -> NDArray[np.float64]:
        """Kept / logical KV entries at steps `j`, summed over layers (the authors' compression_stats)."""
        j = np.asarray(j, dtype=np.int64)
        held = sum(w * self.counts(g, j, anchor) for g, w in enumerate(self.group_weights))
        return np.asarray(held / (self.prompt_len + j + 1), dtype=np.float64)

    def visible(self, j: int, group: int = 0, anchor: int = -1) -> IntArray:
        """Absolute positions step `j` attends to in `group` (`visible(j - 1)`: held when step j begins)."""
        p = np.arange(self.prompt_len + j + 1)
        sinks, lo, hi = self.speech(group, j, anchor)
        s = p - self.speech_start
        in_speech = (s >= 0) & (s < self.speech_len)
        keep_speech = (s < sinks) | ((s >= lo) & (s < hi))
        i = p - self.prompt_len
        recent = i > j - self.out_window if self.out_window else np.ones(p.shape, dtype=bool)
        keep_out = (i < self.n_sink) | recent
        keep = np.where(in_speech, keep_speech, np.where(i >= 0, keep_out, True))
        return p[keep]
