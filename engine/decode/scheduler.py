"""The decode loop of one batch: refill free rows, step every occupied row, settle finished rows.

    ┌─► refill: free rows take waiting work (prefill + import); a row may finish on its first token
    │   step:   one token for every occupied row
    └── settle: EOS / budget → a result; a loop → rolled back and queued again, or a LOOP result

Results are yielded the moment a row finishes, so any number of requests runs with a fixed
batch. A row that loops only ever costs itself: it leaves its row, and its retry waits in the queue
like any other request. `cancel` is checked before every step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from engine.decode.api import AnchorTracker, DecodeResult, SegmentBoundary, SpeechAnchor
from engine.decode.config import EngineConfig
from engine.decode.eviction import make_policy
from engine.decode.fused import FusedModel
from engine.decode.kv_store import StoreTooSmall
from engine.decode.layout import RowLayout
from engine.decode.loop_guard import LoopDetector, rollback_point, salvage
from engine.decode.rows import RowTable, StepPlan
from engine.decode.runner import PendingTokens, Runner
from engine.decode.sampling import DecodeMode
from engine.decode.slots import RowSlots
from engine.decode.step import ModelParts
from engine.decode.work import Cost, Work, WorkQueue
from engine.errors import Cancelled
from engine.types import FinishReason

_REVERT_EVERY = 16  # steps between checks whether a retrying row is past its loop
_GROW_EVERY = 32  # steps between checks whether a shrunk batch fits twice over


class GrowBatch(Exception):
    """Memory allows twice the rows now: the decoder resumes every row in a bigger batch."""


@dataclass(frozen=True, slots=True, eq=False)
class _Launched:
    plan: StepPlan
    tokens: PendingTokens
    index: int  # the step's entry in `Scheduler.host_times`


class Scheduler:
    def __init__(
        self,
        parts: ModelParts,
        model: FusedModel,
        config: EngineConfig,
        rows: int,
        queue: WorkQueue,
        eos: tuple[int, ...],
        boundary: SegmentBoundary | None,
        anchor: SpeechAnchor | None = None,
        grow: bool = False,
    ) -> None:
        self.config, self.queue, self.boundary, self.grow = config, queue, boundary, grow
        if config.policy.anchored and anchor is None:
            raise ValueError("the speech-anchor eviction policy needs the model adapter's timestamp reader")
        self.anchor = anchor if config.policy.anchored else None
        self.trackers: list[AnchorTracker | None] = [None] * rows
        self.base = DecodeMode(repetition_penalty=config.repetition_penalty)
        self.policy = make_policy(config.policy)
        self.layers = len(parts.layers)
        layer_group = self.policy.layout(1, (0, 0), 1, self.layers).layer_group
        self.eos = np.array(eos, dtype=np.int64)
        self.runner = Runner(parts, model, config, rows, layer_group)
        self.table = RowTable(rows)
        self.detector = LoopDetector(rows, config.loop) if config.loop.enabled else None
        self.steps = 0
        self.host_times: list[float] = []  # per step, CPU seconds: planning, input preparation, settling
        self._settled = time.perf_counter()

    def run(self, cancel: threading.Event | None = None) -> Iterator[DecodeResult]:
        """Refill, queue the next step, then settle the previous one: the device never waits for
        the host to read tokens, except while a retrying row needs its mode switched in time."""
        pending: _Launched | None = None
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            yield from self._refill()
            if self.table.n == 0 and pending is None:
                return
            ahead = self._launch() if self.table.n and (pending is None or self._may_run_ahead()) else None
            if pending is not None:
                yield from self._settle(pending)
            pending = ahead
            if self.grow and self.steps % _GROW_EVERY == 0 and self._room_to_grow():
                raise GrowBatch()

    def in_flight(self) -> list[Work]:
        """Work held by the rows now, each to resume after the tokens it has produced."""
        table = self.table
        return [self._work(r).resumed(table.tokens(r), table.cost(r)) for r in range(table.n)]

    def _room_to_grow(self) -> bool:
        full = self.table.n == self.table.rows
        return full and self.runner.fits(2 * self.table.rows, *self.table.need()) and self.queue.waiting()

    # 1) refill
    def _refill(self) -> Iterator[DecodeResult]:
        while self.table.n < self.table.rows:
            works = [w for w in (self.queue.pop() for _ in range(self.table.rows - self.table.n)) if w]
            if not works:
                return
            layouts = [self._layout(w) for w in works]
            try:
                self.runner.reserve(layouts)
            except (torch.OutOfMemoryError, StoreTooSmall):
                self.queue.push_front(works)
                raise
            for index, (work, layout) in enumerate(zip(works, layouts, strict=True)):
                tracker = self.anchor() if self.anchor is not None else None
                anchor = _read(tracker, work.prefix, -1)
                slots = RowSlots(layout, len(work.prefix), anchor)
                try:
                    first, seconds = self.runner.admit(self.table.n, work, layout, slots.held)
                except torch.OutOfMemoryError:
                    self.queue.push_front(works[index:])
                    raise
                work = work.spent(Cost(prefill_seconds=seconds))
                yield from self._occupy(work, slots, first, tracker, anchor)

    def _layout(self, work: Work) -> RowLayout:
        request = work.request
        return self.policy.layout(
            request.prompt_length, request.speech_span, request.max_new_tokens, self.layers
        )

    def _occupy(
        self, work: Work, slots: RowSlots, first: int, tracker: AnchorTracker | None, anchor: int
    ) -> Iterator[DecodeResult]:
        tokens = (*work.prefix, first)
        if first in self.eos:
            yield work.result(work.prefix, FinishReason.EOS, Cost(), self._evicts)
        elif len(tokens) >= work.request.max_new_tokens:
            yield work.result(tokens, FinishReason.LENGTH, Cost(), self._evicts)
        else:
            row = self.table.occupy(work, slots, list(tokens), _read(tracker, [first], anchor))
            self.trackers[row] = tracker
            if self.detector is not None:
                self.detector.reset(row)

    # 2) step
    def _launch(self) -> _Launched:
        started, prepared = time.thread_time(), self.runner.prep_seconds
        plan = self.table.plan()
        planned = time.thread_time() - started
        launched = _Launched(plan, self.runner.launch(plan), len(self.host_times))
        self.host_times.append(planned + self.runner.prep_seconds - prepared)
        self.steps += 1
        return launched

    def _may_run_ahead(self) -> bool:
        """Whether the next step may be queued before this one's tokens are read: not while a row
        waits to switch back to the base mode (it must see its switch before its next step), nor
        when eviction follows the transcript's timestamps (the plan then depends on the tokens)."""
        if self.anchor is not None:
            return False
        return not any(w is not None and w.revert_after is not None for w in self.table.work[: self.table.n])

    # 3) settle
    def _settle(self, launched: _Launched) -> Iterator[DecodeResult]:
        chosen = launched.tokens.read()
        started, cpu = time.perf_counter(), time.thread_time()
        n, plan = self.table.n, launched.plan
        tickets = self.table.tickets[:n]
        if len(plan.tickets) == n and (plan.tickets == tickets).all():
            tokens, valid, rows = chosen, None, slice(0, n)
            kept, held = plan.kept, plan.held
        else:  # rows left or arrived since the step was queued: match them by ticket
            where = {int(t): i for i, t in enumerate(plan.tickets)}
            index = np.array([where.get(int(t), -1) for t in tickets], dtype=np.int64)
            valid = index >= 0
            rows = np.flatnonzero(valid)
            tokens = np.where(valid, chosen[np.maximum(index, 0)], -1)
            kept, held = plan.kept[index[rows]], plan.held[index[rows]]
        self.table.account(rows, kept, held, started - self._settled)
        self._settled = started
        eos = (tokens[:, None] == self.eos[None, :]).any(axis=1)  # (n,)
        self.table.append(tokens, eos, valid)
        if self.anchor is not None:
            self._read_anchors(tokens)
        length = self.table.ints["length"][:n]
        full = ~eos & (length >= self.table.ints["max_new"][:n])
        if valid is not None:
            full &= valid
        looping: set[int] = set()
        if self.detector is not None:
            subset = None if valid is None else rows
            flagged = self.detector.update(self.table.history, length[rows] - 1, tokens[rows], subset)
            looping = {int(r) for r in flagged if not eos[r]}
            if self.steps % _REVERT_EVERY == 0:
                self._revert_modes()
        self.host_times[launched.index] += time.thread_time() - cpu
        if not looping and not (eos | full).any():
            return
        ends = {int(r): FinishReason.EOS for r in np.flatnonzero(eos)}
        ends |= {int(r): FinishReason.LENGTH for r in np.flatnonzero(full)}
        for row in sorted(set(ends) | looping, reverse=True):  # release from the end: rows below stay put
            result = self._recover(row) if row in looping else self._finish(row, ends[row])
            if result is not None:
                yield result

    def _finish(self, row: int, reason: FinishReason, tokens: tuple[int, ...] | None = None) -> DecodeResult:
        work = self._work(row)
        decoded = self.table.tokens(row)
        out = decoded if tokens is None else tokens
        cut = max(0, len(decoded) - len(out))
        result = work.result(out, reason, self.table.cost(row), self._evicts, cut)
        self._release(row)
        return result

    def _recover(self, row: int) -> DecodeResult | None:
        """Send a looping row back to the queue with its next retry, or end it as LOOP."""
        work, tokens = self._work(row), self.table.tokens(row)
        if self.detector is None:
            raise RuntimeError("loop recovery without a loop detector")
        loop = self.detector.loop(row, len(tokens) - 1)
        kept = salvage(tokens, loop)
        if len(kept) > len(work.salvage):
            work = self.table.work[row] = _with_salvage(work, kept)
        retries = self.config.loop.retries
        if work.retries >= len(retries):
            return self._finish(row, FinishReason.LOOP, work.salvage)
        resume = tokens[: rollback_point(tokens, loop, self.boundary)]
        dropped = len(tokens) - len(resume)
        retry = work.retry(resume, retries[work.retries], loop.start, self.table.cost(row), dropped)
        self.queue.push_front([retry])
        self._release(row)
        return None

    def _revert_modes(self) -> None:
        """Rows that retried past their loop go back to the base decoding mode."""
        for row in range(self.table.n):
            work = self.table.work[row]
            if work is None or work.revert_after is None:
                continue
            tokens = self.table.tokens(row)
            if self.boundary is not None:
                passed = self.boundary(tokens) > work.revert_after
            else:
                passed = len(tokens) >= work.revert_after + self.config.loop.min_tokens
            if passed:
                work = self.table.work[row] = _reverted(work, self.base)
                self.runner.set_mode(row, work, self.base, tokens)

    def _read_anchors(self, tokens: np.ndarray) -> None:
        """Feed each row's new token to its timestamp reader; anchors only move forward."""
        for row in range(self.table.n):
            tracker = self.trackers[row]
            self.table.anchor[row] = _read(tracker, [int(tokens[row])], int(self.table.anchor[row]))

    def _release(self, row: int) -> None:
        moved = self.table.release(row)
        self.trackers[row] = self.trackers[moved] if moved is not None else None
        if moved is not None:
            self.trackers[moved] = None
            self.runner.move_row(moved, row)
            if self.detector is not None:
                self.detector.move_row(moved, row)

    def _work(self, row: int) -> Work:
        work = self.table.work[row]
        if work is None:
            raise RuntimeError(f"row {row} holds no work")
        return work

    @property
    def _evicts(self) -> bool:
        return self.config.policy.evicts


def _read(tracker: AnchorTracker | None, tokens: Sequence[int], anchor: int) -> int:
    """The anchor after reading `tokens` (the furthest so far; -1: none)."""
    if tracker is None or not tokens:
        return anchor
    found = tracker.feed(tokens)
    return anchor if found is None else max(anchor, int(found))


def _with_salvage(work: Work, kept: tuple[int, ...]) -> Work:
    return replace(work, salvage=kept)


def _reverted(work: Work, base: DecodeMode) -> Work:
    return replace(work, mode=base, revert_after=None)
