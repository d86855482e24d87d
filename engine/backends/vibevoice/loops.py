"""Repetition-loop detection on generated token ids.

A reply is in a loop when its tail is periodic: the last `L` tokens repeat with some period `p`
(1 ≤ p ≤ `max_period`) and `L ≥ max(min_tokens, min_repeats · p)`. `LoopDetector.cut(ids)`
returns None when there is no loop, else the length to keep: the text before the periodic tail
plus one copy of the repeated pattern, so nothing that is not a repetition is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class LoopDetector:
    max_period: int = 128  # longest repeated pattern looked for, in tokens
    min_repeats: int = 4  # copies of a pattern that make a loop
    min_tokens: int = 64  # shortest periodic tail that makes a loop (for short patterns)

    def __post_init__(self) -> None:
        if self.max_period < 1 or self.min_repeats < 2 or self.min_tokens < 2:
            raise ValueError("loop detection needs max_period ≥ 1, min_repeats ≥ 2, min_tokens ≥ 2")

    def window(self) -> int:
        """How many trailing tokens `cut` needs to see to detect any loop."""
        return max(self.min_tokens, self.min_repeats * self.max_period) + self.max_period

    def cut(self, ids: Sequence[int] | np.ndarray) -> int | None:
        """Tokens to keep when `ids` ends in a loop (see the module docstring), else None."""
        g = np.asarray(ids, dtype=np.int64)
        n = len(g)
        for p in range(1, min(self.max_period, n // self.min_repeats) + 1):
            need = max(self.min_tokens, self.min_repeats * p)
            if need > n or not np.array_equal(g[n - need + p :], g[n - need : n - p]):
                continue
            start = n - need
            while start > 0 and g[start - 1] == g[start - 1 + p]:
                start -= 1
            return start + p
        return None
