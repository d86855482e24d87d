"""Where one row's KV entries live in the store, per layer group, kept as a dense prefix.

A row holds exactly the entries its layout keeps, in slots `[0, n)` of each group (so attention
needs only a length per row). Order does not matter to attention: keys carry their absolute
positions (RoPE applied once, never re-rotated). Each step, `RowSlots.advance`

1. frees the slots of the entries the step drops (speech leaving its range, an output leaving
   the output window);
2. puts the new entries (the fed token, speech tokens coming back under `follow`) into the lowest
   free slots, appending only when nothing was freed;
3. moves live entries from the end into any remaining holes below the new length.

A step therefore copies at most as many entries as it drops, and a row's slot count is the most
entries it ever holds — below no eviction's whenever the policy drops more than it brings back.
`RowSlots` is one row's map, built at admission (`held`: what its prefill imports) and the
definition of a step (`advance`); the batch keeps all rows' maps as arrays and advances them with
numpy (`batch_slots.BatchSlots`, tested entry for entry against `advance`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from engine.decode.layout import IntArray, RowLayout, speech_at

_EMPTY = np.zeros(0, dtype=np.int64)
QUIET, RING, FULL = 0, 1, 2  # step kinds (`RowSlots.step_kinds`)


@dataclass(frozen=True, slots=True)
class GroupStep:
    """One group's changes for one step of one row (slots are row-local)."""

    write: int  # slot of the fed token
    move_src: IntArray  # live entries moved ...
    move_dst: IntArray  # ... into these holes
    speech_src: IntArray  # speech indices coming back (follow) ...
    speech_dst: IntArray  # ... into these slots
    length: int  # entries held after the step


class RowSlots:
    def __init__(self, layout: RowLayout, resume: int, anchor: int = -1) -> None:
        """The row as imported for step `resume` (it holds what step `resume - 1` saw)."""
        self.layout = layout
        self.anchor = anchor  # the anchor its speech bounds were last moved to
        total = layout.prompt_len + layout.max_new_tokens
        # an anchored row may hold more than its planned capacity (its store makes room)
        capacity = max(total if layout.anchored else layout.capacity, 1)
        self.pos = np.full((layout.groups, capacity), -1, dtype=np.int64)  # position in each slot
        self.slot = np.full((layout.groups, total), -1, dtype=np.int64)  # slot of each position
        self.n = np.zeros(layout.groups, dtype=np.int64)
        self.layer_counts = np.bincount(np.asarray(layout.layer_group), minlength=layout.groups)  # (G,)
        self.held: list[IntArray] = []  # positions imported, per group (slot order)
        self.bounds: list[tuple[int, int]] = []  # current speech [lo, hi) per group
        for g in range(layout.groups):
            positions = layout.visible(resume - 1, g, anchor)
            self.pos[g, : positions.size] = positions
            self.slot[g, positions] = np.arange(positions.size)
            self.n[g] = positions.size
            self.held.append(positions)
            _, lo, hi = layout.speech(g, resume - 1, anchor)
            self.bounds.append((int(lo), int(hi)))

    def step_kinds(self) -> NDArray[np.int8]:
        """(max_new_tokens,) what step j does: `QUIET` only appends the fed token (its write slot
        is each group's count, which grows by one); `RING` only overwrites the output leaving the
        window with the fed one (same slot, same count); `FULL` changes the speech it keeps.
        An anchored group's bounds follow the tokens read, so they are planned as if the anchor stood
        still; `RowTable.plan` makes a step `FULL` when the row's anchor moved. `RowTable.plan` plans
        every kind for all rows at once (`batch_slots.BatchSlots`); `advance` is the definition."""
        layout = self.layout
        j = np.arange(layout.max_new_tokens)
        moves = np.zeros(j.shape, dtype=bool)
        for g in range(layout.groups):
            _, lo, hi = layout.speech(g, j)
            _, lo_before, hi_before = layout.speech(g, j - 1)
            moves |= (lo != lo_before) | (hi != hi_before)
        drops = (j - layout.out_window >= layout.n_sink) if layout.out_window else np.zeros(j.shape, bool)
        return np.where(moves, FULL, np.where(drops, RING, QUIET)).astype(np.int8)

    def ring_slots(self, j: int) -> IntArray:
        """(G, W) slots of the outputs in the window when step j begins, by ring index
        `(i - n_sink) mod W` (-1: not generated yet); (G, 0) without an output window."""
        layout, width = self.layout, self.layout.out_window
        out = np.full((layout.groups, width), -1, dtype=np.int64)
        if width:
            i = np.arange(max(layout.n_sink, j - width), j)  # outputs held past the sinks
            out[:, (i - layout.n_sink) % width] = self.slot[:, layout.prompt_len + i]
        return out

    def advance(self, j: int, anchor: int = -1) -> list[GroupStep]:
        """Slot changes of step `j` in every group (call once per step, in order)."""
        layout = self.layout
        self.anchor = anchor
        i = j - layout.out_window
        gone_output = [layout.prompt_len + i] if layout.out_window and i >= layout.n_sink else []
        return [self._group(g, j, anchor, gone_output) for g in range(layout.groups)]

    def _group(self, g: int, j: int, anchor: int, gone_output: list[int]) -> GroupStep:
        layout, s0 = self.layout, self.layout.speech_start
        lo0, hi0 = self.bounds[g]
        lo1, hi1 = (lo0, hi0) if not self.layout.rules[g].evicts else self._speech(g, j, anchor)
        self.bounds[g] = (lo1, hi1)
        if (lo1, hi1) == (lo0, hi0):  # speech unchanged: the fed token takes the freed slot or the next
            return self._simple(g, layout.prompt_len + j, gone_output)
        gone = np.concatenate([s0 + np.arange(lo0, min(lo1, hi0)), gone_output]).astype(np.int64)
        back = s0 + np.arange(max(hi0, lo1), hi1)  # speech coming back in (follow)
        incoming = np.concatenate([back, [layout.prompt_len + j]]).astype(np.int64)
        pos, slot, n = self.pos[g], self.slot[g], int(self.n[g])
        holes = slot[gone]
        pos[holes], slot[gone] = -1, -1
        length = n + incoming.size - gone.size
        free = np.concatenate([np.sort(holes[holes < length]), np.arange(n, length)]).astype(np.int64)
        targets, need = free[: incoming.size], free[incoming.size :]
        tail = np.arange(length, n)
        src = tail[pos[tail] >= 0]
        moved = pos[src]
        pos[need], slot[moved] = moved, need
        pos[src] = -1
        pos[targets], slot[incoming] = incoming, targets
        self.n[g] = length
        return GroupStep(int(targets[-1]), src, need, back - s0, targets[:-1], length)

    def _speech(self, g: int, j: int, anchor: int) -> tuple[int, int]:
        return speech_at(self.layout.rules[g], j, self.layout.speech_len, anchor)

    def _simple(self, g: int, fed: int, gone_output: list[int]) -> GroupStep:
        """A step that drops at most one output and brings nothing back: no moves."""
        pos, slot = self.pos[g], self.slot[g]
        if gone_output:
            target = int(slot[gone_output[0]])
            slot[gone_output[0]] = -1
        else:
            target = int(self.n[g])
            self.n[g] += 1
        pos[target], slot[fed] = fed, target
        return GroupStep(target, _EMPTY, _EMPTY, _EMPTY, _EMPTY, int(self.n[g]))
