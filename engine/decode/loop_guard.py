"""Repetition loops: noticed while decoding, rolled back, re-decoded with a bounded retry schedule.

A row is looping when its newest tokens repeat one n-gram over and over: for some period p ≤
`max_period`, the last `max(min_tokens, min_repeats·p)` tokens are p-periodic. The detector keeps,
per row and period, how many trailing tokens equal the token p before them, updated once per
generated token for all rows at once (no rescans).

Recovery (done by the scheduler): cut the row back to its last complete segment before the loop
(the adapter's `SegmentBoundary`), re-decode from there with the next `DecodeMode` of `retries`
until the output has passed the place where the loop began, then go on greedily. When no retry is
left, the row ends with `FinishReason.LOOP`, keeping what it produced before the loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.decode.api import SegmentBoundary
from engine.decode.config import DecodeMode, LoopGuardConfig
from engine.decode.work import Cost, Work


@dataclass(frozen=True, slots=True)
class Loop:
    start: int  # index of the first token of the repeated stretch
    period: int  # length of the repeated n-gram


class LoopDetector:
    """Trailing period-p match counts for rows 0..B-1: run (B, P).

    Each row also keeps its last P tokens, newest first (`recent`), so an update compares the new
    token with them directly instead of gathering them from the history; a row that was `reset`
    (admitted, possibly with output already produced) reads them from the history on its first
    update.
    """

    def __init__(self, rows: int, config: LoopGuardConfig) -> None:
        periods = np.arange(1, config.max_period + 1)
        self.periods = periods  # (P,)
        self.need = np.maximum(config.min_tokens, config.min_repeats * periods) - periods  # (P,)
        self.run = np.zeros((rows, config.max_period), dtype=np.int64)  # (B, P)
        self.recent = np.full((rows, config.max_period), -1, dtype=np.int64)  # (B, P) newest first
        self.stale = np.ones(rows, dtype=bool)  # `recent` must be read from the history

    def reset(self, row: int) -> None:
        self.run[row] = 0
        self.stale[row] = True

    def move_row(self, src: int, dst: int) -> None:
        self.run[dst], self.recent[dst], self.stale[dst] = self.run[src], self.recent[src], self.stale[src]

    def update(
        self, history: np.ndarray, index: np.ndarray, tokens: np.ndarray, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """Rows 0..n-1 (or `rows`) appended `tokens` (n,) at `index` (n,); `history` (≥n, G) holds
        the tokens of every row.

        Returns the rows now looping.
        """
        at = slice(0, tokens.shape[0]) if rows is None else rows
        stale = self.stale[at]
        if stale.any():
            self._read(history, index, np.arange(self.run.shape[0])[at], stale)
        recent = self.recent[at]
        match = recent == tokens[:, None]  # (n, P): the token p back equals the new one
        run = np.where(match, self.run[at] + 1, 0)
        self.run[at] = run
        self.recent[at] = np.concatenate((tokens[:, None], recent[:, :-1]), axis=1)
        looping = np.flatnonzero((run >= self.need[None, :]).any(axis=1))
        return looping if rows is None else rows[looping]

    def _read(self, history: np.ndarray, index: np.ndarray, rows: np.ndarray, stale: np.ndarray) -> None:
        """Fill `recent` of the stale rows with the tokens before their new one."""
        for k in np.flatnonzero(stale).tolist():
            row, i = int(rows[k]), int(index[k])
            back = i - self.periods  # (P,)
            self.recent[row] = np.where(back >= 0, history[row, np.maximum(back, 0)], -1)
            self.stale[row] = False

    def loop(self, row: int, index: int) -> Loop:
        """The repeated stretch ending at `index` in a row that `update` reported."""
        over = self.run[row] >= self.need
        starts = index - self.run[row] - self.periods + 1  # (P,)
        best = int(np.argmin(np.where(over, starts, np.iinfo(np.int64).max)))
        return Loop(start=max(int(starts[best]), 0), period=int(self.periods[best]))


def find_loop(tokens: Sequence[int] | np.ndarray, config: LoopGuardConfig) -> Loop | None:
    """The loop `tokens` end in, by rescanning them (the definition `LoopDetector` keeps up
    incrementally), or None. The shortest period wins; the stretch reaches back as far as it repeats."""
    g = np.asarray(tokens, dtype=np.int64)
    n = len(g)
    for p in range(1, min(config.max_period, n // config.min_repeats) + 1):
        need = max(config.min_tokens, config.min_repeats * p)
        if need > n or not np.array_equal(g[n - need + p :], g[n - need : n - p]):
            continue
        start = n - need
        while start > 0 and g[start - 1] == g[start - 1 + p]:
            start -= 1
        return Loop(start=start, period=p)
    return None


def rollback_point(tokens: Sequence[int], loop: Loop, boundary: SegmentBoundary | None) -> int:
    """Length of the output to keep before re-decoding: the last complete segment before the loop."""
    if boundary is None:
        return loop.start
    return min(max(int(boundary(tokens[: loop.start])), 0), loop.start)


def salvage(tokens: Sequence[int], loop: Loop) -> tuple[int, ...]:
    """What a row keeps when it cannot recover: its output up to and including one repetition."""
    return tuple(tokens[: loop.start + loop.period])


def past_loop(
    tokens: Sequence[int], revert_after: int, boundary: SegmentBoundary | None, min_tokens: int
) -> bool:
    """Whether a retried output has passed the loop it retried (its segment ended past the loop's
    start; without a boundary reader, `min_tokens` past it): it goes back to the base mode."""
    if boundary is not None:
        return boundary(tokens) > revert_after
    return len(tokens) >= revert_after + min_tokens


def next_attempt(
    work: Work,
    tokens: tuple[int, ...],
    loop: Loop,
    boundary: SegmentBoundary | None,
    retries: tuple[DecodeMode, ...],
    cost: Cost,
) -> tuple[Work, Work | None]:
    """A row's work after its output `tokens` ended in `loop` (its best salvage kept), and the retry
    to queue (resuming after the last complete segment before the loop), or None when none is left.
    `cost` is what this attempt cost."""
    kept = salvage(tokens, loop)
    if len(kept) > len(work.salvage):
        work = replace(work, salvage=kept)
    if work.retries >= len(retries):
        return work, None
    resume = tokens[: rollback_point(tokens, loop, boundary)]
    return work, work.retry(resume, retries[work.retries], loop.start, cost, len(tokens) - len(resume))
