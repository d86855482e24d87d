"""The waveform's signal of a recording in progress: appended from the capture thread, read by the
window while it grows.

One float32 buffer that doubles when full: an append costs what it adds (amortised), and `view()`
is the filled part without a copy — an hour of recording is not copied again at every redraw. A
view stays valid and unchanged after later appends (they write past its end, or into a new buffer).
"""

from __future__ import annotations

import threading

import numpy as np

FIRST_CAPACITY = 1 << 16  # values: about half a minute at 2,000 a second


class DisplaySignal:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffer = np.zeros(FIRST_CAPACITY, np.float32)
        self._size = 0

    def append(self, values: np.ndarray) -> None:
        with self._lock:
            end = self._size + len(values)
            if end > len(self._buffer):
                grown = np.empty(max(end, 2 * len(self._buffer)), np.float32)
                grown[: self._size] = self._buffer[: self._size]
                self._buffer = grown
            self._buffer[self._size : end] = values
            self._size = end

    def view(self) -> np.ndarray:
        """Everything appended so far, (N,) float32, not copied."""
        with self._lock:
            return self._buffer[: self._size]

    def clear(self) -> None:
        with self._lock:
            self._buffer, self._size = np.zeros(FIRST_CAPACITY, np.float32), 0
