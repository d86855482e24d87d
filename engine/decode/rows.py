"""Host-side state of the batch rows: which work each row holds, its output, and its next step.

Occupied rows are always the prefix 0..n-1 (a freed row takes the last row's place), so a step
runs on a plain slice of every buffer. Each row's slot map (`slots.RowSlots`, kept for all rows
as arrays in `batch_slots.BatchSlots` when the policy evicts speech) says where its entries live
per layer group; `plan` turns one step of every row into what the device needs: positions, write
slots and visible lengths per group, and the entries each group moves or brings back, with numpy
over all rows (no Python loop over rows). A plan never depends on the tokens the previous step
chose, so the next step can be queued before they are read; a step's rows are named by `tickets`
(one per occupancy), so its tokens and costs reach the right rows even after rows left or moved
(`match`). A row admitted with its first token still on the device (`occupy(..., unread=True)`)
steps at once; that token joins its output when the step that fed it is read (`read_first`).
Kept/logical KV (summed over layers, the authors' `compression_stats`) is tracked per row, counted
when a step's tokens are read (`account`): its mean over steps and its value at the row's latest
step.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from engine.decode.batch_slots import BatchSlots, Transfer
from engine.decode.slots import FULL, QUIET, RING, RowSlots
from engine.decode.work import Cost, Work


@dataclass(frozen=True, slots=True)
class StepPlan:
    positions: np.ndarray  # (n,) absolute position of each fed token
    slots: np.ndarray  # (G, n) store slot its key and value go to, per layer group
    seqlen: np.ndarray  # (G, n) visible slots after the write, per layer group
    chosen: np.ndarray  # (n,) index of the token the step chooses
    moves: tuple[Transfer | None, ...]  # per group: live entries moved into holes (src, dst slots)
    speech: tuple[Transfer | None, ...]  # per group: speech indices brought back → slots
    tickets: np.ndarray  # (n,) which occupancy of each row the step ran for
    kept: np.ndarray  # (n,) kept / logical KV entries of the step, all layers
    held: np.ndarray  # (n,) entries held after the step, all layers
    reads_first: bool = False  # some row's first token is unread: read the fed tokens back too


class RowTable:
    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.n = 0
        self.work: list[Work | None] = [None] * rows
        self.slots: list[RowSlots | None] = [None] * rows
        self.prompt_len = np.zeros(rows, dtype=np.int64)
        self.step = np.zeros(rows, dtype=np.int64)  # j: index of the output token the next step feeds
        self.ints = {"length": np.zeros(rows, dtype=np.int64), "max_new": np.zeros(rows, dtype=np.int64)}
        self.anchor = np.full(rows, -1, dtype=np.int64)  # speech anchor the next step uses
        self.applied = np.full(rows, -1, dtype=np.int64)  # anchor the row's slots were last moved to
        self.kept = np.zeros(rows)  # Σ kept/logical over this row's steps
        self.kept_last = np.zeros(rows)  # kept/logical at its latest step
        self.peak = np.zeros(rows, dtype=np.int64)  # most entries held at once, all layers
        self.steps = np.zeros(rows, dtype=np.int64)
        self.seconds = np.zeros(rows)  # decode time while in the batch
        self.history = np.zeros((rows, 0), dtype=np.int64)  # (B, G) generated tokens
        self.tickets = np.zeros(rows, dtype=np.int64)  # a number per occupancy, never reused
        self.unread = np.zeros(rows, dtype=bool)  # its first token is on the device only
        self._issued = 0
        self.kinds = np.zeros((rows, 0), dtype=np.int8)  # (B, max_new) `RowSlots.step_kinds`
        self.count = np.zeros((1, rows), dtype=np.int64)  # (G, B) entries each group holds
        self.ring = np.zeros((1, rows, 0), dtype=np.int64)  # (G, B, W) slot of each output ring entry
        self.window = np.zeros(rows, dtype=np.int64)  # output window W (0: outputs kept)
        self.sinks = np.zeros(rows, dtype=np.int64)  # output sinks
        self.weights = np.ones(1, dtype=np.int64)  # (G,) layers per group
        self.maps: BatchSlots | None = None  # every row's slot map, kept when the policy evicts speech
        self._all = np.arange(rows)

    def occupy(
        self, work: Work, slots: RowSlots, tokens: list[int], anchor: int = -1, unread: bool = False
    ) -> int:
        """Put work into the first free row; `tokens` are its output so far, `slots` its imported
        entries, `anchor` its speech anchor. `unread`: its next output (the first token its prefill
        chose) is on the device only; its first step feeds it. That step is `len(tokens) - 1`, or
        `len(tokens)` when unread. Returns the row."""
        layout, j = slots.layout, len(tokens) - 1 + unread
        row, self.n = self.n, self.n + 1
        if self.history.shape[1] < layout.max_new_tokens:
            grown = np.zeros((self.rows, layout.max_new_tokens), dtype=np.int64)
            grown[:, : self.history.shape[1]] = self.history
            self.history = grown
        self.history[row, : len(tokens)] = tokens
        if self.kinds.shape[1] < layout.max_new_tokens:
            grown_kinds = np.zeros((self.rows, layout.max_new_tokens), dtype=np.int8)
            grown_kinds[:, : self.kinds.shape[1]] = self.kinds
            self.kinds = grown_kinds
        self.kinds[row, : layout.max_new_tokens] = slots.step_kinds()
        if self.count.shape[0] != layout.groups:
            self.count = np.zeros((layout.groups, self.rows), dtype=np.int64)
            self.ring = np.zeros((layout.groups, self.rows, 0), dtype=np.int64)
        if self.ring.shape[2] < layout.out_window:
            grown_ring = np.zeros((layout.groups, self.rows, layout.out_window), dtype=np.int64)
            grown_ring[:, :, : self.ring.shape[2]] = self.ring
            self.ring = grown_ring
        self.ring[:, row, : layout.out_window] = slots.ring_slots(j)
        self.window[row], self.sinks[row] = layout.out_window, layout.n_sink
        self.weights = np.bincount(np.asarray(layout.layer_group), minlength=layout.groups)
        self._none: tuple[None, ...] = (None,) * layout.groups
        self.count[:, row] = slots.n
        if self.maps is None and any(rule.evicts for rule in layout.rules):
            self.maps = BatchSlots(self.rows, layout)
        if self.maps is not None:
            self.maps.occupy(row, slots)
        self.prompt_len[row], self.step[row], self.unread[row] = layout.prompt_len, j, unread
        self.ints["length"][row], self.ints["max_new"][row] = len(tokens), layout.max_new_tokens
        self.anchor[row], self.applied[row] = anchor, slots.anchor
        self.kept[row] = self.kept_last[row] = self.steps[row] = self.seconds[row] = self.peak[row] = 0
        self.work[row] = work
        self.slots[row] = slots
        self._issued += 1
        self.tickets[row] = self._issued
        return row

    def row_slots(self, row: int) -> RowSlots:
        found = self.slots[row]
        if found is None:
            raise RuntimeError(f"row {row} holds no work")
        return found

    def tokens(self, row: int) -> tuple[int, ...]:
        return tuple(int(t) for t in self.history[row, : self.ints["length"][row]])

    def cost(self, row: int) -> Cost:
        kept = (float(self.kept[row]), int(self.steps[row]), float(self.kept_last[row]), int(self.peak[row]))
        return Cost(0.0, float(self.seconds[row]), *kept)

    def need(self) -> tuple[int, int]:
        """Slots and speech slots per row that rows 0..n-1 need ((0, 0) when empty)."""
        layouts = [self.row_slots(r).layout for r in range(self.n)]
        slots = max((layout.capacity for layout in layouts), default=0)
        speech = max((layout.speech_len if layout.follows else 0 for layout in layouts), default=0)
        return slots, speech

    def plan(self) -> StepPlan:
        """The next step of rows 0..n-1; advances their step (call once per step)."""
        n = self.n
        j = self.step[:n].copy()
        kind = self.kinds[np.arange(n), np.minimum(j, self.kinds.shape[1] - 1)]
        if self.maps is not None:  # speech evicting: a step whose anchor moved changes the speech kept
            kind = np.where(self.anchor[:n] != self.applied[:n], FULL, kind)
        count = self.count[:, :n]  # a view, advanced in place
        slots = count.copy()  # a quiet step writes each group's next slot and holds one more
        window, sinks = self.window[:n], self.sinks[:n]
        index = np.where(window > 0, (j - sinks) % np.maximum(window, 1), 0)  # output j's ring entry
        in_ring = (window > 0) & (j >= sinks)
        if (kind == QUIET).all():
            count += 1
        else:
            count[:, kind == QUIET] += 1
            ring = np.flatnonzero(kind == RING)  # the leaving output's slot, which output j takes
            slots[:, ring] = self.ring[:, ring, index[ring]]
        moves = speech = self._none
        if self.maps is not None:
            moves, speech = self._advance_maps(self.maps, kind, j, slots, count)
        rows = np.flatnonzero(in_ring)
        self.ring[:, rows, index[rows]] = slots[:, rows]
        seqlen = count.copy()
        held = self.weights @ seqlen  # (n,) entries held, all layers
        kept = held / self.weights.sum() / (self.prompt_len[:n] + j + 1)
        self.step[:n] += 1
        tickets = self.tickets[:n].copy()
        first = bool(self.unread[:n].any())
        return StepPlan(
            self.prompt_len[:n] + j, slots, seqlen, j + 1, moves, speech, tickets, kept, held, first
        )

    def match(self, tickets: np.ndarray) -> np.ndarray | None:
        """(n,) each row's place in a step that ran for `tickets` (−1: it was not in it); None when
        the step ran for exactly the rows of now."""
        n = self.n
        if len(tickets) == n and (tickets == self.tickets[:n]).all():
            return None
        where = {int(t): i for i, t in enumerate(tickets)}
        return np.array([where.get(int(t), -1) for t in self.tickets[:n]], dtype=np.int64)

    def settle(
        self,
        plan: StepPlan,
        chosen: np.ndarray,
        index: np.ndarray | None,
        ended: Collection[int],
        seconds: float,
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | slice]:
        """Place a step's `chosen` tokens on the rows of now (`index` from `match`; rows `ended` on
        their first token take no part) and account the step to the rows that took part. Returns the
        tokens (n,) (−1: no part), which rows took part ((n,) bool; None: all) and those rows."""
        n = self.n
        if index is None and not ended:
            self.account(slice(0, n), plan.kept, plan.held, seconds)
            return chosen, None, slice(0, n)
        index = np.arange(n) if index is None else index
        valid = index >= 0
        valid[list(ended)] = False
        rows = np.flatnonzero(valid)
        self.account(rows, plan.kept[index[rows]], plan.held[index[rows]], seconds)
        return np.where(valid, chosen[np.maximum(index, 0)], -1), valid, rows

    def first_in_flight(self) -> bool:
        """Whether a row's first step is queued while its first token is still unread."""
        n = self.n
        return bool((self.unread[:n] & (self.step[:n] > self.ints["length"][:n])).any())

    def read_first(self, rows: np.ndarray, first: np.ndarray) -> None:
        """Unread rows `rows` learnt their first token `first`: it joins their output."""
        length = self.ints["length"]
        self.history[rows, length[rows]] = first
        length[rows] += 1
        self.unread[rows] = False

    def _advance_maps(
        self, maps: BatchSlots, kind: np.ndarray, j: np.ndarray, slots: np.ndarray, count: np.ndarray
    ) -> tuple[tuple[Transfer | None, ...], tuple[Transfer | None, ...]]:
        """Every row's slot map takes its step (`BatchSlots`); full steps set their rows' write slots
        and counts in `slots` and `count` and return the moves and speech copies per group."""
        fed = self.prompt_len[: self.n] + j
        if not kind.any():  # every row only appends its token (QUIET is 0)
            maps.append(self._all[: self.n], fed, slots)
            return self._none, self._none
        if (kind == RING).all():  # every row only overwrites the output leaving its window
            maps.overwrite(self._all[: self.n], fed, slots)
            return self._none, self._none
        quiet, ring, full = (np.flatnonzero(kind == k) for k in (QUIET, RING, FULL))
        maps.append(quiet, fed[quiet], slots[:, quiet])
        if ring.size:
            maps.overwrite(ring, fed[ring], slots[:, ring])
        if not full.size:
            return self._none, self._none
        slots[:, full], count[:, full], moves, speech = maps.advance(full, j[full], self.anchor[full])
        self.applied[full] = self.anchor[full]
        self._moved_outputs(maps, moves)
        return tuple(_nonempty(t) for t in moves), tuple(_nonempty(t) for t in speech)

    def _moved_outputs(self, maps: BatchSlots, moves: list[Transfer]) -> None:
        """Outputs a full step moved to other slots: their ring entries follow."""
        for g, (rows, _, dst) in enumerate(moves):
            width, sinks = self.window[rows], self.sinks[rows]
            i = maps.pos[g, rows, dst] - self.prompt_len[rows]  # outputs among the moved entries
            keep = (width > 0) & (i >= sinks)
            self.ring[g, rows[keep], (i[keep] - sinks[keep]) % width[keep]] = dst[keep]

    def account(self, rows: np.ndarray | slice, kept: np.ndarray, held: np.ndarray, seconds: float) -> None:
        """Rows `rows` finished a step that kept `kept` of their KV, held `held` entries and took
        `seconds`."""
        self.peak[rows] = np.maximum(self.peak[rows], held)
        self.kept[rows] += kept
        self.kept_last[rows] = kept
        self.steps[rows] += 1
        self.seconds[rows] += seconds

    def append(self, tokens: np.ndarray, eos: np.ndarray, valid: np.ndarray | None = None) -> None:
        """Rows 0..n-1 chose `tokens` (n,); those where `eos` is set end without appending, and
        those not `valid` (admitted after the step was queued) did not take part."""
        n = self.n
        length = self.ints["length"][:n]
        keep = ~eos & (length < self.ints["max_new"][:n])
        if valid is not None:
            keep &= valid
        rows = np.flatnonzero(keep)
        self.history[rows, length[rows]] = tokens[rows]
        length[rows] += 1

    def release(self, row: int) -> int | None:
        """Free a row; the last occupied row moves into it. Returns the row that moved, if any."""
        last = self.n - 1
        self.n = last
        moved = None
        if row != last:
            arrays = (*self.ints.values(), self.prompt_len, self.step, self.anchor, self.applied)
            self.kinds[row], self.count[:, row], self.ring[:, row] = (
                self.kinds[last],
                self.count[:, last],
                self.ring[:, last],
            )
            self.window[row], self.sinks[row] = self.window[last], self.sinks[last]
            rest = (self.kept, self.kept_last, self.peak, self.steps, self.seconds, self.unread)
            for array in (*arrays, *rest, self.tickets):
                array[row] = array[last]
            self.history[row] = self.history[last]
            self.work[row], self.slots[row] = self.work[last], self.slots[last]
            if self.maps is not None:
                self.maps.move_row(last, row)
            moved = last
        self.work[last], self.slots[last] = None, None
        return moved


def _nonempty(transfer: Transfer) -> Transfer | None:
    return transfer if transfer[0].size else None
