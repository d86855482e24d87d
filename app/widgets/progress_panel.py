"""Progress of a running job in the main area: the stage, the overall percentage, time left, Cancel.

`update_progress(progress)` shows the stage in words ("Transcribing — chunk 3 of 12") and the
job's overall progress: each stage owns a share of the bar (`WEIGHTS`, per kind of job), so the
bar moves forward through the stages and never goes back (a stage that restarts at 0 % cannot
pull it down). The time left comes from the overall rate since the first measurable progress and
is shown only once there is enough of it to mean something; until then it says "estimating".
Cancel emits `cancel_requested` and shows "Cancelling…" until the job ends (`finish`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from app.widgets.quiet_bar import QuietProgressBar
from engine.progress import format_clock
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
ORDER = (Stage.LOAD, Stage.VAD, Stage.CHUNK, Stage.INFER, Stage.SPEAKERS, Stage.STITCH, Stage.EXPORT)
WEIGHTS = {  # share of the bar per stage, by kind of job
    "load": {Stage.LOAD: 0.5, Stage.VAD: 0.45, Stage.CHUNK: 0.05},
    "transcribe": {Stage.LOAD: 0.03, Stage.VAD: 0.03, Stage.CHUNK: 0.01, Stage.INFER: 0.78,
                   Stage.SPEAKERS: 0.13, Stage.STITCH: 0.02},
}  # fmt: skip
MIN_SECONDS, MIN_PROGRESS = 3.0, 0.02  # before this much, an estimate would be noise


def describe(progress: Progress) -> str:
    """The stage in words, with its units when they are countable."""
    text = STAGE_TEXT.get(progress.stage, str(progress.stage))
    if progress.stage in (Stage.LOAD, Stage.VAD) and progress.total > 0:
        return f"{text} — {format_clock(progress.completed)} of {format_clock(progress.total)}"
    if progress.stage is Stage.INFER and progress.total > 0:
        suffix = f" ({progress.detail})" if progress.detail and not progress.completed else ""
        return f"{text} — chunk {int(progress.completed)} of {int(progress.total)}{suffix}"
    return f"{text} — {progress.detail}" if progress.detail else text


def overall(kind: str, progress: Progress) -> float:
    """The job's overall fraction done at `progress` (stages before it count as done)."""
    weights = WEIGHTS.get(kind, WEIGHTS["transcribe"])
    if progress.stage not in weights:
        return 0.0
    position = ORDER.index(progress.stage)
    done = sum(w for stage, w in weights.items() if ORDER.index(stage) < position)
    return min(done + weights[progress.stage] * min(max(progress.fraction, 0.0), 1.0), 1.0)


class ProgressPanel(QWidget):
    cancel_requested = Signal()
    _base: tuple[float, float] | None  # (time, fraction) where the rate is measured from

    def __init__(self, parent: QWidget | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(parent)
        self.setObjectName("progressPanel")
        self.clock = clock
        self.label = QLabel()
        self.label.setAccessibleName("Progress")
        self.label.setMinimumWidth(120)
        self.bar = QuietProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setMinimumWidth(120)
        self.bar.setFormat("%p %")
        self.bar.setAccessibleName("Overall progress")
        self.eta = QLabel()
        self.eta.setAccessibleName("Time left")
        self.cancel = QPushButton()
        self.cancel.setToolTip("Stop the running job (Esc)")
        self.cancel.setAccessibleName("Cancel the running job")
        self.cancel.clicked.connect(self._on_cancel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.label, 3)
        layout.addWidget(self.bar, 2)
        layout.addWidget(self.eta, 2)
        layout.addWidget(self.cancel)
        self._reset("transcribe")
        self.hide()

    def start(self, text: str, kind: str = "transcribe") -> None:
        self._reset(kind)
        self._show(text)
        self.show()

    def _reset(self, kind: str) -> None:
        """A job of `kind` starting now: nothing done, no estimate, Cancel ready."""
        self.kind, self._started, self._fraction, self._base = kind, self.clock(), 0.0, None
        self.bar.setValue(0)
        self.eta.setText("")
        self.cancel.setEnabled(True)
        self.cancel.setText("Cancel")

    def update_progress(self, progress: Progress) -> None:
        self._show(describe(progress))
        self._fraction = max(self._fraction, overall(self.kind, progress))  # never backwards
        self.bar.setValue(round(self._fraction * 1000))
        now = self.clock()
        if self._base is None and self._fraction > 0:
            self._base = (now, self._fraction)
        self.eta.setText(f"{format_clock(now - self._started)} elapsed, {self._left(now)}")

    def _show(self, text: str) -> None:
        """The stage text, shortened with "…" to the label's width (the tooltip has all of it)."""
        width = max(self.label.width(), self.label.minimumWidth())
        self.label.setText(self.label.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, width))
        self.label.setToolTip(text)
        self.label.setAccessibleDescription(text)

    def _left(self, now: float) -> str:
        if self._base is None:
            return "estimating the time left"
        since, from_fraction = self._base
        done = self._fraction - from_fraction
        if now - since < MIN_SECONDS or done < MIN_PROGRESS:
            return "estimating the time left"
        left = (1.0 - self._fraction) * (now - since) / done
        return f"about {format_clock(left)} left" if left >= 60 else "under a minute left"

    def _on_cancel(self) -> None:
        self.show_cancelling()
        self.cancel_requested.emit()

    def show_cancelling(self) -> None:
        """Feedback that Cancel was heard (from the button or Esc) while the job stops."""
        self.cancel.setEnabled(False)
        self.cancel.setText("Cancelling…")
        self._show("Cancelling… the chunks being decoded finish first; finished work is kept")
        self.eta.setText("")

    def finish(self) -> None:
        self.hide()
