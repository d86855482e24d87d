"""Host-side state of the batch rows: which work each row holds, its output, and its next step.

Occupied rows are always the prefix 0..n-1 (a freed row takes the last row's place), so a step
runs on a plain slice of every buffer. Each row's slot map (`slots.RowSlots`) says where its
entries live per layer group; `plan` turns one step of every row into what the device needs:
positions, write slots and visible lengths per group, and the entries each group moves or brings
back. Kept/logical KV (summed over layers, the authors' `compression_stats`) is tracked per row:
its mean over steps and its value at the row's latest step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.decode.slots import GroupStep, RowSlots
from engine.decode.work import Cost, Work

Transfer = tuple[np.ndarray, np.ndarray, np.ndarray]  # (rows, src, dst) of one layer group


@dataclass(frozen=True, slots=True)
class StepPlan:
    positions: np.ndarray  # (n,) absolute position of each fed token
    slots: np.ndarray  # (G, n) store slot its key and value go to, per layer group
    seqlen: np.ndarray  # (G, n) visible slots after the write, per layer group
    chosen: np.ndarray  # (n,) index of the token the step chooses
    moves: tuple[Transfer | None, ...]  # per group: live entries moved into holes (src, dst slots)
    speech: tuple[Transfer | None, ...]  # per group: speech indices brought back → slots


class RowTable:
    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.n = 0
        self.work: list[Work | None] = [None] * rows
        self.slots: list[RowSlots | None] = [None] * rows
        self.prompt_len = np.zeros(rows, dtype=np.int64)
        self.step = np.zeros(rows, dtype=np.int64)  # j: index of the output token the next step feeds
        self.ints = {"length": np.zeros(rows, dtype=np.int64), "max_new": np.zeros(rows, dtype=np.int64)}
        self.anchor = np.full(rows, -1, dtype=np.int64)  # furthest speech index a segment reached
        self.kept = np.zeros(rows)  # Σ kept/logical over this row's steps
        self.kept_last = np.zeros(rows)  # kept/logical at its latest step
        self.peak = np.zeros(rows, dtype=np.int64)  # most entries held at once, all layers
        self.steps = np.zeros(rows, dtype=np.int64)
        self.seconds = np.zeros(rows)  # decode time while in the batch
        self.history = np.zeros((rows, 0), dtype=np.int64)  # (B, G) generated tokens

    def occupy(self, work: Work, slots: RowSlots, tokens: list[int], anchor: int = -1) -> int:
        """Put work into the first free row; `tokens` are its output so far, `slots` its imported
        entries (built for step `len(tokens) - 1`), `anchor` its speech anchor. Returns the row."""
        layout = slots.layout
        row, self.n = self.n, self.n + 1
        if self.history.shape[1] < layout.max_new_tokens:
            grown = np.zeros((self.rows, layout.max_new_tokens), dtype=np.int64)
            grown[:, : self.history.shape[1]] = self.history
            self.history = grown
        self.history[row, : len(tokens)] = tokens
        self.prompt_len[row], self.step[row] = layout.prompt_len, len(tokens) - 1
        self.ints["length"][row], self.ints["max_new"][row] = len(tokens), layout.max_new_tokens
        self.anchor[row] = anchor
        self.kept[row] = self.kept_last[row] = self.steps[row] = self.seconds[row] = self.peak[row] = 0
        self.work[row] = work
        self.slots[row] = slots
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

    def plan(self) -> StepPlan:
        """The next step of rows 0..n-1 (call once per step)."""
        n = self.n
        j = self.step[:n]
        steps = [self.row_slots(r).advance(int(j[r]), int(self.anchor[r])) for r in range(n)]
        groups = len(steps[0])
        flat = [x for s in steps for g in s for x in (g.write, g.length)]
        table = np.array(flat, dtype=np.int64).reshape(n, groups, 2)
        slots, seqlen = table[:, :, 0].T, table[:, :, 1].T  # (G, n) each
        layer_counts = self.row_slots(0).layer_counts
        held = layer_counts @ seqlen  # (n,) entries over all layers
        self.peak[:n] = np.maximum(self.peak[:n], held)
        kept = held / layer_counts.sum() / (self.prompt_len[:n] + j + 1)
        self.kept[:n] += kept
        self.kept_last[:n] = kept
        self.steps[:n] += 1
        busy = [any(g.move_src.size or g.speech_src.size for g in s) for s in steps]
        if any(busy):
            moves = tuple(_transfer([s[g] for s in steps], "move") for g in range(groups))
            speech = tuple(_transfer([s[g] for s in steps], "speech") for g in range(groups))
        else:
            moves = speech = (None,) * groups
        return StepPlan(self.prompt_len[:n] + j, slots, seqlen, j + 1, moves, speech)

    def append(self, tokens: np.ndarray, eos: np.ndarray) -> None:
        """Rows 0..n-1 chose `tokens` (n,); those where `eos` is set end without appending."""
        n = self.n
        length = self.ints["length"][:n]
        keep = ~eos & (length < self.ints["max_new"][:n])
        rows = np.flatnonzero(keep)
        self.history[rows, length[rows]] = tokens[rows]
        length[rows] += 1
        self.step[:n] += 1

    def release(self, row: int) -> int | None:
        """Free a row; the last occupied row moves into it. Returns the row that moved, if any."""
        last = self.n - 1
        self.n = last
        moved = None
        if row != last:
            arrays = (*self.ints.values(), self.prompt_len, self.step, self.anchor, self.kept)
            for array in (*arrays, self.kept_last, self.peak, self.steps, self.seconds):
                array[row] = array[last]
            self.history[row] = self.history[last]
            self.work[row], self.slots[row] = self.work[last], self.slots[last]
            moved = last
        self.work[last], self.slots[last] = None, None
        return moved


def _transfer(steps: list[GroupStep], kind: str) -> Transfer | None:
    """Concatenate one group's per-row moves (or speech copies) into (rows, src, dst)."""
    pairs = [(s.move_src, s.move_dst) if kind == "move" else (s.speech_src, s.speech_dst) for s in steps]
    counts = np.array([src.size for src, _ in pairs])
    if counts.sum() == 0:
        return None
    rows = np.repeat(np.arange(len(pairs)), counts)
    src = np.concatenate([src for src, _ in pairs]).astype(np.int64)
    dst = np.concatenate([dst for _, dst in pairs]).astype(np.int64)
    return rows, src, dst
