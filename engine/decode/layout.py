"""Where each token of one row lives in the compact KV store, and what the row sees at each step.

A row's slots are `[sys1 | speech ring (w) | sys2 | output sinks | output ring]`, so the entries a
decode step may attend to are always the contiguous prefix `[0, seqlen(j))`. Keys keep the absolute
position they were rotated with; eviction only overwrites ring slots in place:

- speech: token `s` of the audio lives in ring slot `s mod w`; the window `[a_j, a_j + w)` stays at
  the start for `delay` steps and then advances `rate` tokens per step (`a_j` below), so a token
  entering the window lands exactly in the slot of the one leaving it;
- outputs: the first `n_sink` generated tokens keep their own slots, later ones cycle through a ring
  of `out_window` slots (`out_window == 0`: every output is kept, in order).

Decode step `j` feeds output token `j` (absolute position `prompt_len + j`). The arithmetic is written
with numpy ufuncs so the same functions serve one row (ints) and a whole batch (arrays).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

IntArray = NDArray[np.int64]


def window_start(j: ArrayLike, delay: ArrayLike, rate: ArrayLike, room: ArrayLike) -> IntArray:
    """First speech token in the window at step `j`: 0 for `j < delay`, then `rate` more per step.

    `room = speech_len - window` is where the window stops (the end of the audio).
    """
    moved = np.floor(np.asarray(rate, dtype=np.float64) * np.maximum(np.asarray(j) - delay + 1, 0))
    return np.clip(moved.astype(np.int64), 0, room)


def output_slot(i: ArrayLike, n_sink: ArrayLike, out_window: ArrayLike) -> IntArray:
    """Slot of output token `i`, relative to the row's output region."""
    i = np.asarray(i, dtype=np.int64)
    ring = np.asarray(out_window, dtype=np.int64)
    cycled = n_sink + (i - n_sink) % np.maximum(ring, 1)
    return np.where((ring > 0) & (i >= n_sink), cycled, i)


def outputs_kept(j: ArrayLike, n_sink: ArrayLike, out_window: ArrayLike) -> IntArray:
    """How many output slots hold a visible token at step `j` (the fed token included)."""
    seen = np.asarray(j, dtype=np.int64) + 1
    ring = np.asarray(out_window, dtype=np.int64)
    return np.where(ring > 0, np.minimum(seen, np.asarray(n_sink) + ring), seen)


@dataclass(frozen=True, slots=True)
class RowLayout:
    """The compact slot map of one request under one eviction setting."""

    prompt_len: int  # P, speech included
    speech_start: int  # s0: prompt position of the first speech token
    speech_len: int  # S
    speech_window: int  # w ≤ S; w == S: the speech is never evicted
    delay: int  # steps the speech window stays at the start
    rate: float  # speech tokens the window advances per step after the delay
    n_sink: int  # output sinks (0 without output eviction)
    out_window: int  # output ring size; 0: outputs are never evicted
    max_new_tokens: int

    def __post_init__(self) -> None:
        if not 0 <= self.speech_start <= self.speech_start + self.speech_len <= self.prompt_len:
            raise ValueError("the speech span must lie inside the prompt")
        if not min(1, self.speech_len) <= self.speech_window <= self.speech_len:
            raise ValueError("the speech window must hold 1..speech_len tokens")
        if self.delay < 0 or self.rate < 0 or self.n_sink < 0 or self.out_window < 0:
            raise ValueError("delay, rate, sinks and window must not be negative")

    @property
    def speech_moves(self) -> bool:
        return self.speech_window < self.speech_len

    @property
    def out_offset(self) -> int:
        """First slot of the output region."""
        return self.prompt_len - self.speech_len + self.speech_window

    @property
    def output_slots(self) -> int:
        ring = self.n_sink + self.out_window if self.out_window else self.max_new_tokens
        return min(ring, self.max_new_tokens)

    @property
    def capacity(self) -> int:
        """Slots this row needs in the store."""
        return self.out_offset + self.output_slots

    def window_start(self, j: int) -> int:
        if not self.speech_moves:
            return 0
        room = self.speech_len - self.speech_window
        return int(window_start(j, self.delay, self.rate, room))

    def prompt_slot(self, p: int, window_start: int = 0) -> int | None:
        """Slot of prompt position `p`, or None when that speech token is outside the window."""
        s0, s1 = self.speech_start, self.speech_start + self.speech_len
        if p < s0:
            return p
        if p >= s1:
            return p - self.speech_len + self.speech_window
        if not window_start <= p - s0 < window_start + self.speech_window:
            return None
        return s0 + (p - s0) % self.speech_window

    def output_slot(self, i: int) -> int:
        return self.out_offset + int(output_slot(i, self.n_sink, self.out_window))

    def seqlen(self, j: int) -> int:
        """Visible slots at step `j`: a contiguous prefix of the row."""
        return self.out_offset + int(outputs_kept(j, self.n_sink, self.out_window))

    def kept_fraction(self, j: int) -> float:
        """Kept / logical KV entries at step `j` (the paper's "kept %")."""
        return self.seqlen(j) / (self.prompt_len + j + 1)

    def visible(self, j: int) -> IntArray:
        """Absolute positions step `j` attends to (the fed token at `prompt_len + j` included).

        `visible(j - 1)` lists what the row holds when step `j` begins.
        """
        p = np.arange(self.prompt_len + j + 1)
        s0, s1 = self.speech_start, self.speech_start + self.speech_len
        a = self.window_start(j)
        in_window = (p - s0 >= a) & (p - s0 < a + self.speech_window)
        i = p - self.prompt_len
        recent = i > j - self.out_window if self.out_window else np.ones(p.shape, dtype=bool)
        keep_out = (i < self.n_sink) | recent
        speech = (p >= s0) & (p < s1)
        keep = np.where(speech, in_window, np.where(i >= 0, keep_out, True))
        return p[keep]

    def slots(self, positions: IntArray) -> IntArray:
        """Slots of absolute positions (speech ones must be inside the current window)."""
        p = np.asarray(positions, dtype=np.int64)
        s0, s1 = self.speech_start, self.speech_start + self.speech_len
        w = self.speech_window
        out = self.out_offset + output_slot(p - self.prompt_len, self.n_sink, self.out_window)
        speech = s0 + (p - s0) % max(w, 1)
        prompt = np.where(p < s0, p, np.where(p < s1, speech, p - self.speech_len + w))
        return np.where(p >= self.prompt_len, out, prompt)
