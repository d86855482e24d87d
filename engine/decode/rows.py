"""Host-side state of the batch rows: which work each row holds, its output, and its next step.

Occupied rows are always the prefix 0..n-1 (a freed row takes the last row's place), so a step
runs on a plain slice of every buffer. Per-row numbers live in numpy arrays and are advanced for
all rows at once; `plan` turns them into one step's positions, write slots, visible lengths and
the speech tokens entering each row's window (see `layout.py` for the arithmetic).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.decode.layout import RowLayout, output_slot, outputs_kept, window_start
from engine.decode.work import Cost, Work

# per-row integers: name → meaning (all advanced or moved together)
_FIELDS = (
    "prompt_len",  # P: output token i sits at absolute position P + i
    "step",  # j: index of the output token the next step feeds
    "length",  # tokens in `history`
    "max_new",  # token budget
    "out_off",  # first output slot
    "n_sink",
    "out_window",  # output ring size (0: outputs kept)
    "speech_start",  # s0 (= first speech slot)
    "window",  # speech window size w
    "room",  # speech_len - w: where the window stops
    "delay",
    "start",  # current speech window start a
)


@dataclass(frozen=True, slots=True)
class StepPlan:
    positions: np.ndarray  # (n,) absolute position of each fed token
    slots: np.ndarray  # (n,) store slot its key and value go to
    seqlen: np.ndarray  # (n,) visible slots after the write
    chosen: np.ndarray  # (n,) index of the token the step chooses
    speech: tuple[np.ndarray, np.ndarray, np.ndarray] | None  # (rows, src, dst) entering windows
    tickets: np.ndarray  # (n,) which occupant of each row the step ran for
    kept: np.ndarray  # (n,) visible / logical KV entries of the step


class RowTable:
    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.n = 0
        self.work: list[Work | None] = [None] * rows
        self.ints = {name: np.zeros(rows, dtype=np.int64) for name in _FIELDS}
        self.rate = np.zeros(rows)
        self.moves = np.zeros(rows, dtype=bool)
        self.kept = np.zeros(rows)  # Σ kept/logical over this row's steps
        self.steps = np.zeros(rows, dtype=np.int64)
        self.seconds = np.zeros(rows)  # decode time while in the batch
        self.tickets = np.zeros(rows, dtype=np.int64)  # a number per occupancy, never reused
        self._issued = 0
        self.history = np.zeros((rows, 0), dtype=np.int64)  # (B, G) generated tokens

    def occupy(self, work: Work, layout: RowLayout, tokens: list[int]) -> int:
        """Put work into the first free row; `tokens` are its output so far. Returns the row."""
        row, self.n = self.n, self.n + 1
        if self.history.shape[1] < layout.max_new_tokens:
            grown = np.zeros((self.rows, layout.max_new_tokens), dtype=np.int64)
            grown[:, : self.history.shape[1]] = self.history
            self.history = grown
        self.history[row, : len(tokens)] = tokens
        values = {
            "prompt_len": layout.prompt_len,
            "step": len(tokens) - 1,
            "length": len(tokens),
            "max_new": layout.max_new_tokens,
            "out_off": layout.out_offset,
            "n_sink": layout.n_sink,
            "out_window": layout.out_window,
            "speech_start": layout.speech_start,
            "window": layout.speech_window,
            "room": layout.speech_len - layout.speech_window,
            "delay": layout.delay,
            "start": layout.window_start(len(tokens) - 2),
        }
        for name, value in values.items():
            self.ints[name][row] = value
        self.rate[row], self.moves[row] = layout.rate, layout.speech_moves
        self.kept[row] = self.steps[row] = self.seconds[row] = 0
        self._issued += 1
        self.tickets[row] = self._issued
        self.work[row] = work
        return row

    def tokens(self, row: int) -> tuple[int, ...]:
        return tuple(int(t) for t in self.history[row, : self.ints["length"][row]])

    def cost(self, row: int) -> Cost:
        return Cost(0.0, float(self.seconds[row]), float(self.kept[row]), int(self.steps[row]))

    def need(self) -> tuple[int, int]:
        """Slots and speech slots per row that rows 0..n-1 need (0, 0 when empty)."""
        n, f = self.n, {name: a[: self.n] for name, a in self.ints.items()}
        if n == 0:
            return 0, 0
        ring = np.where(f["out_window"] > 0, f["n_sink"] + f["out_window"], f["max_new"])
        slots = f["out_off"] + np.minimum(ring, f["max_new"])
        speech = np.where(self.moves[:n], f["window"] + f["room"], 0)
        return int(slots.max()), int(speech.max())

    def plan(self) -> StepPlan:
        """The next step of rows 0..n-1; advances their step and speech windows (once per step).

        The plan never depends on the tokens the previous step chose, so it can be made (and the
        step queued) before they are read.
        """
        n, f = self.n, {name: a[: self.n] for name, a in self.ints.items()}
        j = f["step"].copy()
        positions = f["prompt_len"] + j
        slots = f["out_off"] + output_slot(j, f["n_sink"], f["out_window"])
        seqlen = f["out_off"] + outputs_kept(j, f["n_sink"], f["out_window"])
        speech = self._move_windows(j)
        f["step"] += 1
        kept = seqlen / (positions + 1)
        return StepPlan(positions, slots, seqlen, j + 1, speech, self.tickets[:n].copy(), kept)

    def account(self, rows: np.ndarray, kept: np.ndarray, seconds: float) -> None:
        """Rows `rows` finished a step that kept `kept` of their KV and took `seconds`."""
        self.kept[rows] += kept
        self.steps[rows] += 1
        self.seconds[rows] += seconds

    def _move_windows(self, j: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        n, moves = self.n, self.moves[: self.n]
        if not moves.any():
            return None
        old, w = self.ints["start"][:n].copy(), self.ints["window"][:n]
        new = np.where(
            moves, window_start(j, self.ints["delay"][:n], self.rate[:n], self.ints["room"][:n]), 0
        )
        self.ints["start"][:n] = new
        lo = np.maximum(old + w, new)  # speech tokens entering: [lo, new + w)
        count = np.where(moves, np.maximum(new + w - lo, 0), 0)
        total = int(count.sum())
        if total == 0:
            return None
        rows = np.repeat(np.arange(n), count)
        src = np.repeat(lo - (np.cumsum(count) - count), count) + np.arange(total)
        dst = self.ints["speech_start"][rows] + src % w[rows]
        return rows, src, dst

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
            arrays = (*self.ints.values(), self.rate, self.moves, self.kept, self.steps, self.seconds)
            for array in (*arrays, self.tickets):
                array[row] = array[last]
            self.history[row] = self.history[last]
            self.work[row] = self.work[last]
            moved = last
        self.work[last] = None
        return moved
