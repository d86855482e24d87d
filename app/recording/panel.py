"""The recording bar: microphone picker, record/stop, pause/resume, level meter, elapsed time, lag.

`RecordPanel` is a plain widget with no engine knowledge: it lists the devices it is given
(`set_devices`), says which one is chosen (`device_name()`), emits `record_clicked`,
`pause_toggled(bool)` and `captions_clicked`, and shows a `LiveStatus` (`show_status`): the
peak level as a meter (dBFS scale), the elapsed time (pauses excluded), "Loading models…" until
the live transcriber is ready, and then, when the live lines trail the audio by more than
`BEHIND_NOTE` seconds, how far behind they are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

from app.timeline import format_time
from app.widgets.quiet_bar import QuietProgressBar

FLOOR_DB = -60.0
BEHIND_NOTE = 3.0
LOADING_NOTE = "Loading models…"


def meter_value(peak: float) -> int:
    """A peak (0..1) as a meter position 0..100 on a -60..0 dBFS scale."""
    if peak <= 0:
        return 0
    db = 20 * math.log10(min(peak, 1.0))
    return round(100 * max(0.0, (db - FLOOR_DB) / -FLOOR_DB))


class RecordPanel(QWidget):
    record_clicked = Signal()
    pause_toggled = Signal(bool)
    captions_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("recordPanel")
        self.setAccessibleName("Recording")
        self.devices = QComboBox()
        self.devices.setAccessibleName("Microphone")
        self.devices.setToolTip("The input to record from (remembered)")
        self.record_button = QPushButton()  # its text is set_recording's
        self.record_button.setAccessibleName("Record or stop")
        self.pause_button = QPushButton("Pause")
        self.pause_button.setCheckable(True)
        self.pause_button.setAccessibleName("Pause or resume recording")
        self.meter = QuietProgressBar()
        self.meter.setRange(0, 100)
        self.meter.setTextVisible(False)
        self.meter.setFixedWidth(160)
        self.meter.setAccessibleName("Input level")
        self.elapsed = QLabel("0:00.0")
        self.elapsed.setAccessibleName("Elapsed time")
        self.elapsed.setMinimumWidth(70)
        self.lag = QLabel()
        self.lag.setAccessibleName("Live transcription delay")
        self.captions_button = QPushButton("Captions")
        self.captions_button.setToolTip("Show the live lines in a large window (a second screen)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        for w in (QLabel("Microphone:"), self.devices, self.record_button, self.pause_button, self.meter,
                  self.elapsed, self.lag):  # fmt: skip
            layout.addWidget(w)
        layout.addStretch(1)
        layout.addWidget(self.captions_button)
        self.record_button.clicked.connect(self.record_clicked)
        self.pause_button.toggled.connect(self._on_pause)
        self.captions_button.clicked.connect(self.captions_clicked)
        self.set_recording(False)

    def set_devices(self, names: Sequence[str], chosen: str | None) -> None:
        """List `names` with `chosen` selected when it is there. Listing is not a choice: the list
        says nothing while it fills (else a remembered input that is unplugged would be forgotten)."""
        with QSignalBlocker(self.devices):
            self.devices.clear()
            self.devices.addItems(list(names))
            if chosen in names:
                self.devices.setCurrentText(chosen)

    def device_name(self) -> str | None:
        return self.devices.currentText() or None

    def set_recording(self, recording: bool) -> None:
        self.record_button.setText("■ Stop" if recording else "● Record")
        self.devices.setEnabled(not recording)
        self.pause_button.setEnabled(recording)
        if not recording:
            self.pause_button.setChecked(False)
            self.meter.setValue(0)

    def show_status(self, status: object) -> None:
        self.meter.setValue(0 if status.paused else meter_value(status.level))  # type: ignore[attr-defined]
        self.elapsed.setText(format_time(status.seconds))  # type: ignore[attr-defined]
        behind = status.behind_seconds  # type: ignore[attr-defined]
        if status.loading:  # type: ignore[attr-defined]
            self.lag.setText(LOADING_NOTE)
        else:
            self.lag.setText(f"Transcript {behind:.0f} s behind" if behind > BEHIND_NOTE else "")

    def _on_pause(self, paused: bool) -> None:
        self.pause_button.setText("Resume" if paused else "Pause")
        self.pause_toggled.emit(paused)

    def keyPressEvent(self, event: object) -> None:  # Esc does not stop a recording by accident
        if getattr(event, "key", lambda: None)() == Qt.Key.Key_Escape:
            return
        super().keyPressEvent(event)  # type: ignore[arg-type]
