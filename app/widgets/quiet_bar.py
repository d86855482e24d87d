"""A progress bar whose value changes are painted with the window's next frame, not at once.

`QProgressBar.setValue` repaints the bar synchronously whenever the drawn bar or its text would
change, and a synchronous repaint flushes everything else waiting to be painted in the window
too: the table, the waveform, the labels. The recording meter (10 values a second) and the
progress of a run (up to 20) each made the window paint whole, on the spot, inside the tick that
set them: 3.7 s of the window's time over a two-minute recording, and stalls of 70–160 ms while
typing on a loaded machine. `QuietProgressBar.setValue` sets the value with the bar's updates
off, then turns them on again, which schedules an ordinary update: the bar is painted with the
rest of the window at the next frame. Everything else (range, text, accessibility) is
`QProgressBar`'s own.
"""

from __future__ import annotations

from PySide6.QtWidgets import QProgressBar


class QuietProgressBar(QProgressBar):
    def setValue(self, value: int) -> None:  # type: ignore[override]
        if value == self.value():
            return
        self.setUpdatesEnabled(False)
        try:
            super().setValue(value)
        finally:
            self.setUpdatesEnabled(True)
