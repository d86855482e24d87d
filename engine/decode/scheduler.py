"""The decode loop of one batch: refill free rows, step every occupied row, settle finished rows.

    ┌─► refill: free rows take waiting work (prefill + import; the first token stays on the device)
    │   step:   one token for every occupied row (an admitted row feeds its first token)
    └── settle: one read of the step's tokens; EOS / budget → a result; a loop → rolled back and
                queued again, or a LOOP result

Results are yielded the moment a row finishes, so any number of requests runs with a bounded
batch. Work comes only through the queue object, a `WorkSource`: only an idle, empty batch waits in
`pop`, a running one takes what is there with `poll`, and a row whose request is `cancelled` leaves
at once, with no result. How many rows take work is the KV memory budget's choice at the size each
row's policy keeps (`Runner.reserve`). An anchored row that keeps more than planned makes the store
grow between steps (`Runner.make_room`); when the budget does not allow it, only the rows that
outgrew the store leave (`spilled`: e.g. a reply without readable timestamps) and the others go on
untouched; the spilled rows resume in a store sized for all their speech once this one is empty (a
shared source takes no new work while they wait). A row that loops only costs itself: its retry
waits in the queue like any other request. `cancel` is checked before every step. Admission never
reads from the device: the host learns a row's first token from the step that fed it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import torch

from engine.decode.admission import GrowBatch
from engine.decode.admit import prepare, read_firsts
from engine.decode.anchor import RowReader, RowReaders
from engine.decode.api import DecodeResult, SegmentBoundary, SpeechAnchor
from engine.decode.config import EngineConfig
from engine.decode.eviction import make_policy
from engine.decode.fused import FusedModel
from engine.decode.kv_store import StoreTooSmall
from engine.decode.loop_guard import LoopDetector, next_attempt, past_loop
from engine.decode.rows import RowTable
from engine.decode.runner import Launched, Runner
from engine.decode.sampling import DecodeMode
from engine.decode.slots import RowSlots
from engine.decode.step import ModelParts
from engine.decode.work import Cost, Work, WorkQueue, WorkSource, join_batch, take
from engine.errors import Cancelled
from engine.types import FinishReason

_REVERT_EVERY = 16  # steps between checks whether a retrying row is past its loop
_GROW_EVERY = 32  # steps between checks whether a shrunk batch fits twice over


class Scheduler:
    def __init__(
        self,
        parts: ModelParts,
        model: FusedModel,
        config: EngineConfig,
        rows: int,
        queue: WorkSource,
        eos: tuple[int, ...],
        boundary: SegmentBoundary | None,
        anchor: SpeechAnchor | None = None,
        grow: bool = False,
    ) -> None:
        self.config, self.queue, self.boundary, self.grow = config, queue, boundary, grow
        self.cancellable = not isinstance(queue, WorkQueue)  # a local run's queue never cancels a row
        if config.eviction.anchored and anchor is None:
            raise ValueError("the speech-anchor eviction policy needs the model adapter's timestamp reader")
        evicts_speech = anchor and config.eviction.evicts_speech
        self.readers = RowReaders(rows, anchor, config.eviction.word_rate) if evicts_speech else None
        self.anchored, self.evicts = config.eviction.anchored, config.eviction.evicts
        self.base = DecodeMode(repetition_penalty=config.repetition_penalty)
        self.policy = make_policy(config.eviction)
        self.layers = len(parts.layers)
        layer_group = self.policy.layout(1, (0, 0), 1, self.layers).layer_group
        self.eos = np.array(eos, dtype=np.int64)
        self.runner = Runner(parts, model, config, rows, layer_group)
        self.table = RowTable(rows)
        self.detector = LoopDetector(rows, config.loop) if config.loop.enabled else None
        self.spilled: list[Work] = []  # rows that outgrew the store, to resume in one sized for them
        self.steps = 0
        self.row_steps = 0  # Σ occupied rows over steps: rows per step = row_steps / steps
        self.host_times: list[float] = []  # per step, CPU seconds: planning, input preparation, settling
        self._settled = time.perf_counter()

    def run(self, cancel: threading.Event | None = None) -> Iterator[DecodeResult]:
        """Refill, queue the next step, then settle the previous one: the device never waits for
        the host to read tokens, except while a retrying row needs its mode switched in time.
        Only an idle, empty batch waits for work (`WorkSource.pop`); a running one takes what is
        there (`poll`). Before each step, rows whose request was cancelled (`WorkSource.cancelled`,
        e.g. a server's client went away) leave at once, with no result."""
        pending: Launched | None = None
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            self._refill(idle=pending is None)
            if self.cancellable:
                self._drop_cancelled()
            if self.table.n == 0 and pending is None:
                if self.spilled:  # only the rows that outgrew this store are left: re-size for them
                    raise StoreTooSmall(self.runner.store.capacity + 1, self.runner.store.speech_capacity)
                return
            ahead = self._launch() if self.table.n and (pending is None or self._may_run_ahead()) else None
            if pending is not None:
                yield from self._settle(pending)
            pending = ahead
            if self.grow and self.steps % _GROW_EVERY == 0 and self._room_to_grow():
                raise GrowBatch()

    def _drop_cancelled(self) -> None:
        for row in reversed(range(self.table.n)):  # from the end: rows below stay put
            if self.queue.cancelled(self._work(row).request.id):
                self._release(row)

    def in_flight(self) -> list[Work]:
        """Work held by the rows now, each to resume after the tokens it has produced."""
        table = self.table
        held = [self._work(r).resumed(table.tokens(r), self._cost(r)) for r in range(table.n)]
        return held + self.spilled  # and the rows that outgrew the store

    def _room_to_grow(self) -> bool:
        """Whether a store of up to twice the rows (at most the batch) fits the rows' need now."""
        rows = min(2 * self.runner.rows, self.config.max_batch)
        full = self.runner.rows < rows and self.table.n == self.runner.rows
        fits = self.runner.fits(rows, *self.table.need())
        return full and not self.spilled and fits and self.queue.waiting()

    # 1) refill
    def _refill(self, idle: bool) -> None:
        """Free rows take waiting work, as many as the store's rows: the KV memory budget's choice
        at the size each row's policy keeps (`Runner.reserve`). Only an idle, empty batch waits."""
        while self.table.n < self.runner.rows and not (self.spilled and self.cancellable):
            works = take(self.queue, self.runner.rows - self.table.n, idle and self.table.n == 0)
            if not works:
                return
            taken, decoding = works, [w for w in self.table.work[: self.table.n] if w is not None]
            works = join_batch(works, decoding) if self.config.eviction.batch_min else works
            ready = (prepare(w, self.policy, self.layers, self.readers) for w in works)
            layouts, readers, slots = zip(*ready, strict=True)
            try:
                self.runner.reserve(layouts, max(int(s.n.max()) for s in slots))
            except (torch.OutOfMemoryError, StoreTooSmall):
                self.queue.push_front(taken)
                raise
            room = self.runner.rows - self.table.n  # the store may hold fewer rows than were taken
            self.queue.push_front(taken[room:])
            for index, (work, layout, reader) in enumerate(zip(works[:room], layouts, readers, strict=False)):
                try:
                    seconds = self.runner.admit(self.table.n, work, layout, slots[index].held)
                except torch.OutOfMemoryError:
                    self.queue.push_front(taken[index:room])
                    raise
                self._occupy(work.spent(Cost(prefill_seconds=seconds)), slots[index], reader)

    def _occupy(self, work: Work, slots: RowSlots, reader: RowReader | None) -> None:
        """The admitted work takes a row, its first token unread (on the device)."""
        anchor = reader.anchor_before(len(work.prefix)) if reader is not None else -1
        row = self.table.occupy(work, slots, list(work.prefix), anchor, unread=True)
        if self.readers is not None:
            self.readers.rows[row] = reader
        if self.detector is not None:
            self.detector.reset(row)

    # 2) step
    def _launch(self) -> Launched:
        started, prepared = time.thread_time(), self.runner.prep_seconds
        if self.readers is not None and self.anchored:  # the anchor read before each row's fed token
            n = self.table.n
            self.readers.anchors(self.table.step[:n], self.table.anchor[:n])
            self._make_room()
        plan = self.table.plan()
        planned = time.thread_time() - started
        launched = Launched(plan, self.runner.launch(plan), len(self.host_times))
        self.host_times.append(planned + self.runner.prep_seconds - prepared)
        self.steps += 1
        self.row_steps += self.table.n
        return launched

    def _make_room(self) -> None:
        """Room for every row's next step (a row may keep one more entry): the store grows in place
        when the budget allows; otherwise the rows that outgrew it leave, to resume in a store sized
        for all their speech (`spilled`), and the rest go on. With no row left it is re-sized now."""
        count = self.table.count[:, : self.table.n]
        try:
            self.runner.make_room(int(count.max()) + 1)
        except StoreTooSmall:
            need = count.max(axis=0) + 2  # the entry the step adds, and the scratch slot
            for row in np.flatnonzero(need > self.runner.store.capacity)[::-1].tolist():  # rows below stay
                work = self._work(row).resumed(self.table.tokens(row), self._cost(row))
                self.spilled.append(replace(work, keeps_speech=True))
                self._release(row)
            if self.table.n == 0:
                raise

    def _may_run_ahead(self) -> bool:
        """Whether the next step may be queued before this one's tokens are read: not while a row
        waits to switch back to the base mode (it must see its switch before its next step), nor,
        under `speech-anchor`, while an admitted row's first token is unread and its first step in
        flight (its second step's anchor needs it). Otherwise a step uses the anchor read before its
        fed token (a one-step lag)."""
        if self.anchored and self.table.first_in_flight():
            return False
        return not any(w is not None and w.revert_after is not None for w in self.table.work[: self.table.n])

    # 3) settle
    def _settle(self, launched: Launched) -> Iterator[DecodeResult]:
        chosen, fed = launched.tokens.read()  # the step's one host read
        started, cpu = time.perf_counter(), time.thread_time()
        n, plan = self.table.n, launched.plan
        index = self.table.match(plan.tickets)  # rows may have left or arrived since it was queued
        firsts = (self.table, self.readers, fed, index, self.eos, self.evicts)
        opened = {} if fed is None else read_firsts(*firsts)
        tokens, valid, rows = self.table.settle(plan, chosen, index, opened, started - self._settled)
        self._settled = started
        eos = (tokens[:, None] == self.eos[None, :]).any(axis=1)  # (n,)
        before = self.table.ints["length"][:n].copy()
        self.table.append(tokens, eos, valid)
        length = self.table.ints["length"][:n]
        if self.readers is not None:
            self.readers.feed(tokens, np.flatnonzero(length > before), before)
        full = ~eos & (length >= self.table.ints["max_new"][:n]) & (True if valid is None else valid)
        looping: set[int] = set()
        if self.detector is not None:
            flagged = self.detector.update(
                self.table.history, length[rows] - 1, tokens[rows], None if valid is None else rows
            )
            looping = {int(r) for r in flagged if not eos[r]}
            if self.steps % _REVERT_EVERY == 0:
                self._revert_modes()
        self.host_times[launched.index] += time.thread_time() - cpu
        if not looping and not opened and not (eos | full).any():
            return
        ends = {int(r): FinishReason.EOS for r in np.flatnonzero(eos)}
        ends |= {int(r): FinishReason.LENGTH for r in np.flatnonzero(full)}
        for row in sorted(set(ends) | looping | set(opened), reverse=True):  # rows below stay put
            if row in opened:  # ended on its first token: its result is ready
                self._release(row)
            result = opened.get(row) or (
                self._recover(row) if row in looping else self._finish(row, ends[row])
            )
            if result is not None:
                yield result

    def _finish(self, row: int, reason: FinishReason, tokens: tuple[int, ...] | None = None) -> DecodeResult:
        if self.readers is not None:
            self.readers.close(row)
        work = self._work(row)
        decoded = self.table.tokens(row)
        out = decoded if tokens is None else tokens
        cut = max(0, len(decoded) - len(out))
        result = work.result(out, reason, self._cost(row), self.evicts, cut)
        self._release(row)
        return result

    def _recover(self, row: int) -> DecodeResult | None:
        """Send a looping row back to the queue with its next retry, or end it as LOOP."""
        if self.detector is None:
            raise RuntimeError("loop recovery without a loop detector")
        tokens, retries, cost = self.table.tokens(row), self.config.loop.retries, self._cost(row)
        loop = self.detector.loop(row, len(tokens) - 1)
        work, retry = next_attempt(self._work(row), tokens, loop, self.boundary, retries, cost)
        self.table.work[row] = work
        if retry is None:
            return self._finish(row, FinishReason.LOOP, work.salvage)
        self.queue.push_front([retry])
        self._release(row)
        return None

    def _revert_modes(self) -> None:
        """Rows that retried past their loop go back to the base decoding mode."""
        for row in range(self.table.n):
            work = self.table.work[row]
            if work is None or work.revert_after is None or self.table.unread[row]:
                continue  # an unread row (its output lacks its first token) waits for a later check
            tokens = self.table.tokens(row)
            if past_loop(tokens, work.revert_after, self.boundary, self.config.loop.min_tokens):
                work = self.table.work[row] = replace(work, mode=self.base, revert_after=None)
                self.runner.set_mode(row, work, self.base, tokens)

    def _release(self, row: int) -> None:
        moved = self.table.release(row)
        if self.readers is not None:
            self.readers.release(row, moved)
        if moved is not None:
            self.runner.move_row(moved, row)
            if self.detector is not None:
                self.detector.move_row(moved, row)

    def _cost(self, row: int) -> Cost:
        lost = self.readers.lost(row) if self.readers is not None else None
        if lost is None or self.readers is None:
            return self.table.cost(row)
        return replace(self.table.cost(row), lost=lost, stopped=self.readers.stopped(row))

    def _work(self, row: int) -> Work:
        work = self.table.work[row]
        if work is None:
            raise RuntimeError(f"row {row} holds no work")
        return work
