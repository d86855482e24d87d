"""Where a row's chunk holds speech, as the VAD found it, in speech tokens: how far a transcript can
have got for the speech its words stand for.

`Voiced(length, spans)` holds the speech indices [lo, hi) the VAD marked as speech (no spans: all of
the chunk). `reach(x)` is the furthest index a transcript can have reached after covering `x`
tokens of voiced speech (it passes any unvoiced stretch that follows for free); `first(x)` the
nearest (it has not yet entered the unvoiced stretch). Both are clipped to the chunk.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class Voiced:
    """The voiced speech indices of one row's chunk, counted from its first speech token."""

    def __init__(self, length: int, spans: Sequence[tuple[int, int]] = ()) -> None:
        mask = np.ones(length, dtype=bool) if not spans else np.zeros(length, dtype=bool)
        for lo, hi in spans:
            mask[max(lo, 0) : max(min(hi, length), 0)] = True
        self.before = np.concatenate([[0], np.cumsum(mask)])  # (S + 1,) voiced tokens before index i

    @property
    def total(self) -> int:
        return int(self.before[-1])

    def reach(self, x: float) -> int:
        """The largest index i with at most `x` voiced tokens before it."""
        return int(np.searchsorted(self.before, x, side="right")) - 1

    def first(self, x: np.ndarray) -> np.ndarray:
        """Per value: the smallest index i with at least `x` voiced tokens before it (≤ the chunk's end)."""
        return np.minimum(np.searchsorted(self.before, x, side="left"), len(self.before) - 1)
