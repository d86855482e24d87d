"""Staged progress for a running job: what is happening, how far, how long is left, and Cancel.

`update_progress(progress)` shows the stage in words ("Transcribing — chunk 3 of 12"), the stage's
percentage and an ETA from `engine.progress.EtaTracker`. Cancel emits `cancel_requested` and
shows "Cancelling…" until the job ends (`finish`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from engine.progress import EtaTracker, format_clock
from engine.types import Progress, Stage

STAGE_TEXT = {
    Stage.LOAD: "Decoding audio",
    Stage.VAD: "Finding speech",
    Stage.CHUNK: "Planning chunks",
    Stage.INFER: "Transcribing",
    Stage.SPEAKERS: "Identifying speakers",
    Stage.STITCH: "Assembling the transcript",
    Stage.EXPORT: "Exporting",
}


def describe(progress: Progress) -> str:
    """The stage in words, with its units when they are countable."""
    text = STAGE_TEXT.get(progress.stage, str(progress.stage))
    if progress.stage in (Stage.LOAD, Stage.VAD) and progress.total > 0:
        return f"{text} — {format_clock(progress.completed)} of {format_clock(progress.total)}"
    if progress.stage is Stage.INFER and progress.total > 0:
        suffix = f" ({progress.detail})" if progress.detail and not progress.completed else ""
        return f"{text} — chunk {int(progress.completed)} of {int(progress.total)}{suffix}"
    return f"{text} — {progress.detail}" if progress.detail else text


class ProgressPanel(QWidget):
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(parent)
        self.clock = clock
        self.label = QLabel("")
        self.label.setAccessibleName("Progress")
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setFixedWidth(180)
        self.bar.setAccessibleName("Progress of the current step")
        self.eta = QLabel("")
        self.eta.setAccessibleName("Time left")
        self.cancel = QPushButton("Cancel")
        self.cancel.setToolTip("Stop the running job (Esc)")
        self.cancel.setAccessibleName("Cancel the running job")
        self.cancel.clicked.connect(self._on_cancel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for w in (self.label, self.bar, self.eta, self.cancel):
            layout.addWidget(w)
        self._tracker = EtaTracker(clock)
        self._started = 0.0
        self.hide()

    def start(self, text: str) -> None:
        self._tracker = EtaTracker(self.clock)
        self._started = self.clock()
        self.label.setText(text)
        self.bar.setValue(0)
        self.eta.setText("")
        self.cancel.setEnabled(True)
        self.cancel.setText("Cancel")
        self.show()

    def update_progress(self, progress: Progress) -> None:
        self.label.setText(describe(progress))
        self.bar.setValue(round(progress.fraction * 1000))
        left = self._tracker.update(progress)
        elapsed = format_clock(self.clock() - self._started)
        self.eta.setText(
            f"{elapsed} elapsed" + (f", about {format_clock(left)} left" if left is not None else "")
        )

    def _on_cancel(self) -> None:
        self.cancel.setEnabled(False)
        self.cancel.setText("Cancelling…")
        self.cancel_requested.emit()

    def finish(self) -> None:
        self.hide()
