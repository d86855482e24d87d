"""The slot maps of all batch rows as arrays over rows, advanced with numpy for every row at once.

`RowSlots` (slots.py) is one row's map and the definition of a step; `BatchSlots` holds the same
maps for rows 0..B−1 — `pos (G, B, C)`: the position in each slot, `slot (G, B, T)`: the slot of
each position, `n (G, B)`: entries held, `lo, hi (G, B)`: the speech range kept — and does what
`RowSlots.advance` does, with the same result slot for slot, for many rows in a handful of array
operations:

- `append` / `overwrite`: the steps that only append the fed token, or only put it into the slot of
  the output leaving the window (`QUIET`, `RING`), for the rows taking them;
- `advance`: the steps that change the speech a row keeps (`FULL`): free what leaves, put what comes
  in (speech brought back, then the fed token) into the lowest free slots, append only past the
  holes, and move live entries from the end into the holes left below the new length.

Ragged per-row lists (what leaves, what comes in, the holes) are flat arrays sorted by row, so
every row's lists keep the order `RowSlots` gives them and the transfers concatenate as before.
"""

from __future__ import annotations

import numpy as np

from engine.decode.layout import IntArray, RowLayout
from engine.decode.slots import RowSlots

Transfer = tuple[np.ndarray, np.ndarray, np.ndarray]  # (rows, src, dst) of one layer group
_PAST = 2  # steps a row may take past its budget (run ahead, its first token unread)
_RULE = ("sink", "window", "delay", "back", "ahead", "span")  # integer fields of `SpeechRule`


def ragged(rows: IntArray, starts: IntArray, counts: IntArray) -> tuple[IntArray, IntArray]:
    """(row, value) of `counts[i]` consecutive values from `starts[i]` for each `rows[i]`, in order."""
    total = int(counts.sum())
    where = np.repeat(np.arange(rows.size), counts)
    first = np.cumsum(counts) - counts
    return rows[where], starts[where] + np.arange(total) - first[where]


class BatchSlots:
    def __init__(self, rows: int, layout: RowLayout) -> None:
        self.groups, self.kinds = layout.groups, tuple(rule.kind for rule in layout.rules)
        g = self.groups
        self.pos = np.full((g, rows, 0), -1, dtype=np.int64)
        self.slot = np.full((g, rows, 0), -1, dtype=np.int64)
        self.n, self.lo, self.hi = (np.zeros((g, rows), dtype=np.int64) for _ in range(3))
        self.rule = {name: np.zeros((g, rows), dtype=np.int64) for name in _RULE}
        self.rate = np.zeros((g, rows))
        self.row = {
            k: np.zeros(rows, dtype=np.int64) for k in ("prompt", "start", "length", "window", "sinks")
        }

    def occupy(self, row: int, slots: RowSlots) -> None:
        """Row `row` takes `slots`' map (as imported) and its layout's rules."""
        layout, (_, capacity), (_, total) = slots.layout, slots.pos.shape, slots.slot.shape
        # room for two steps past the row's end: a step queued before its last token is read
        self.pos, self.slot = _wide(self.pos, capacity + _PAST), _wide(self.slot, total + _PAST)
        self.pos[:, row], self.slot[:, row] = -1, -1
        self.pos[:, row, :capacity], self.slot[:, row, :total] = slots.pos, slots.slot
        self.n[:, row] = slots.n
        self.lo[:, row], self.hi[:, row] = np.array(slots.bounds, dtype=np.int64).reshape(-1, 2).T
        for g, rule in enumerate(layout.rules):
            for name in _RULE:
                self.rule[name][g, row] = getattr(rule, name)
            self.rate[g, row] = rule.rate
        values = (layout.prompt_len, layout.speech_start, layout.speech_len, layout.out_window, layout.n_sink)
        for array, value in zip(self.row.values(), values, strict=True):
            array[row] = value

    def move_row(self, src: int, dst: int) -> None:
        for array in (self.pos, self.slot, self.n, self.lo, self.hi, self.rate, *self.rule.values()):
            array[:, dst] = array[:, src]
        for array in self.row.values():
            array[dst] = array[src]

    def append(self, rows: IntArray, fed: IntArray, at: IntArray) -> None:
        """Rows `rows` append the fed positions `fed` in every group, at slots `at` (G, R): each
        group's count (a `QUIET` step)."""
        for g in range(self.groups):
            self.pos[g, rows, at[g]], self.slot[g, rows, fed] = fed, at[g]
        self.n[:, rows] = at + 1

    def overwrite(self, rows: IntArray, fed: IntArray, at: IntArray) -> None:
        """Rows `rows` put `fed` into the slots `at` (G, R) of the outputs leaving their window (a
        `RING` step)."""
        gone = fed - self.row["window"][rows]
        for g in range(self.groups):
            self.slot[g, rows, gone] = -1
            self.pos[g, rows, at[g]], self.slot[g, rows, fed] = fed, at[g]

    def bounds(self, g: int, rows: IntArray, j: IntArray, anchor: IntArray) -> tuple[IntArray, IntArray]:
        """The speech range [lo, hi) group `g` keeps at steps `j` of rows `rows` (`SpeechRule.bounds`)."""
        kind, length = self.kinds[g], self.row["length"][rows]
        sink, window, delay, back, ahead, span = (self.rule[name][g, rows] for name in _RULE)
        rate, sinks = self.rate[g, rows], np.minimum(sink, length)
        if kind == "front":
            span = np.where(span > 0, np.minimum(span, length), length)
            cap = np.maximum(span - np.minimum(sink, span) - window, 0)
            dropped = np.floor(rate * np.maximum(j + 1 - delay, 0)).astype(np.int64)
            return sinks + np.minimum(dropped, cap), length
        if kind == "follow":
            room = length - sinks
            size = np.where(window > 0, np.minimum(window, room), room)
            moved = np.floor(rate * np.maximum(j - delay + 1, 0)).astype(np.int64)
            lo = sinks + np.clip(moved, 0, room - size)
            return lo, lo + size
        if kind == "anchor":
            top = np.maximum(sinks, length - ahead)
            return np.clip(np.where(anchor >= 0, anchor - back, sinks), sinks, top), length
        return self.lo[g, rows], self.hi[g, rows]

    def advance(
        self, rows: IntArray, j: IntArray, anchor: IntArray
    ) -> tuple[IntArray, IntArray, list[Transfer], list[Transfer]]:
        """Steps `j` of rows `rows` (ascending), each changing the speech some group keeps: per group
        (G, R) the fed token's slot and the entries held, and the entries moved into holes and the
        speech brought back ((rows, src, dst) per group)."""
        write, length = np.zeros((self.groups, rows.size), dtype=np.int64), np.zeros_like(self.n[:, rows])
        moves, speech = [], []
        for g in range(self.groups):
            write[g], length[g], move, back = self._group(g, rows, j, anchor)
            moves.append(move)
            speech.append(back)
        return write, length, moves, speech

    def _group(
        self, g: int, rows: IntArray, j: IntArray, anchor: IntArray
    ) -> tuple[IntArray, IntArray, Transfer, Transfer]:
        pos, slot, n = self.pos[g], self.slot[g], self.n[g]
        prompt, s0 = self.row["prompt"][rows], self.row["start"][rows]
        width, sinks = self.row["window"][rows], self.row["sinks"][rows]
        lo0, hi0 = self.lo[g, rows], self.hi[g, rows]
        lo1, hi1 = self.bounds(g, rows, j, anchor)
        self.lo[g, rows], self.hi[g, rows] = lo1, hi1
        fed = prompt + j
        out = (width > 0) & (j - width >= sinks)  # an output leaves the window
        # what leaves: speech [lo0, min(lo1, hi0)) and the output leaving the window
        dropped = np.maximum(np.minimum(lo1, hi0) - lo0, 0)
        gone_rows, gone = ragged(rows, s0 + lo0, dropped)
        gone_rows, gone = np.concatenate([gone_rows, rows[out]]), np.concatenate([gone, (fed - width)[out]])
        # what comes in: speech [max(hi0, lo1), hi1) brought back, then the fed token
        back_start = np.maximum(hi0, lo1)
        back_count = np.maximum(hi1 - back_start, 0)
        incoming_count = back_count + 1
        in_rows, incoming = ragged(rows, s0 + back_start, incoming_count)
        last = np.cumsum(incoming_count) - 1
        incoming[last] = fed  # the fed token follows the speech brought back
        holes = slot[gone_rows, gone]
        pos[gone_rows, holes], slot[gone_rows, gone] = -1, -1
        total = n[rows] + incoming_count - dropped - out
        lookup = np.zeros(pos.shape[0], dtype=np.int64)
        lookup[rows] = total
        # free slots: the holes below the new length, then the slots appended past the old one
        low = holes < lookup[gone_rows]
        grown_rows, grown = ragged(rows, n[rows], np.maximum(total - n[rows], 0))
        free_rows = np.concatenate([gone_rows[low], grown_rows])
        free = np.concatenate([holes[low], grown])
        order = np.lexsort((free, free_rows))
        free_rows, free = free_rows[order], free[order]
        starts = np.searchsorted(free_rows, rows)
        rank = np.arange(free.size) - starts[np.searchsorted(rows, free_rows)]
        taking = rank < incoming_count[np.searchsorted(rows, free_rows)]
        targets, need_rows, need = free[taking], free_rows[~taking], free[~taking]
        # live entries past the new length move into the holes left below it
        tail_rows, tail = ragged(rows, total, np.maximum(n[rows] - total, 0))
        live = pos[tail_rows, tail] >= 0
        src_rows, src = tail_rows[live], tail[live]
        moved = pos[src_rows, src]
        pos[need_rows, need], slot[src_rows, moved] = moved, need
        pos[src_rows, src] = -1
        pos[in_rows, targets], slot[in_rows, incoming] = incoming, targets
        n[rows] = total
        fed_slot = targets[last]
        speech_mask = np.ones(incoming.size, dtype=bool)
        speech_mask[last] = False
        back = (
            in_rows[speech_mask],
            incoming[speech_mask] - self.row["start"][in_rows[speech_mask]],
            targets[speech_mask],
        )
        return fed_slot, total, (src_rows, src, need), back


def _wide(array: np.ndarray, size: int) -> np.ndarray:
    """`array` with its last axis at least `size` long (new entries −1)."""
    if array.shape[-1] >= size:
        return array
    grown = np.full((*array.shape[:-1], size), -1, dtype=array.dtype)
    grown[..., : array.shape[-1]] = array
    return grown
