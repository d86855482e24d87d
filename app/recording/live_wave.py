"""The waveform of a recording in progress, redrawn as it grows.

`LiveWave(display, show)`: `start()` begins a new recording's waveform, redrawn every `WAVE_MS`
(less often when a redraw takes longer than a twentieth of that); `stop()` draws it a last time.
Each redraw extends the envelope by what was recorded since the one before
(`EnvelopePyramid.extended`), so after an hour a redraw costs about a millisecond, not the 0.1 s a
pyramid of the whole hour takes to build on the window's thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QObject, QTimer

from app.envelope import EnvelopePyramid

WAVE_MS = 1000


class LiveWave(QObject):
    def __init__(self, display: Callable[[], np.ndarray], rate: int,
                 show: Callable[[EnvelopePyramid], None], parent: QObject | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.display, self.rate, self.show = display, rate, show
        self.pyramid: EnvelopePyramid | None = None
        self.timer = QTimer(self)
        self.timer.setInterval(WAVE_MS)
        self.timer.timeout.connect(self.redraw)

    def start(self) -> None:
        self.pyramid = None
        self.timer.setInterval(WAVE_MS)
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()
        self.redraw()

    def redraw(self) -> None:
        started = time.perf_counter()
        signal, old = self.display(), self.pyramid
        if len(signal):
            grown = old is not None and len(signal) >= len(old.samples)
            self.pyramid = old.extended(signal) if grown else EnvelopePyramid.build(signal, self.rate)
            self.show(self.pyramid)
        took_ms = (time.perf_counter() - started) * 1000
        self.timer.setInterval(max(WAVE_MS, int(20 * took_ms)))
