"""The recording meter and a run's progress bar are painted with the window's next frame: setting
their value never makes the whole window paint on the spot."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from app.recording.panel import RecordPanel
from app.widgets.progress_panel import ProgressPanel
from engine.live.session import LiveStatus
from engine.types import Progress, Stage


class Painted(QWidget):
    """A neighbour in the window that counts its paints (the table, the waveform…)."""

    def __init__(self) -> None:
        super().__init__()
        self.paints = 0
        self.setMinimumSize(200, 100)

    def paintEvent(self, _event: object) -> None:
        self.paints += 1


def window_with(bar_owner: QWidget, qtbot) -> tuple[QWidget, Painted]:
    window, neighbour = QWidget(), Painted()
    layout = QVBoxLayout(window)
    layout.addWidget(neighbour)
    layout.addWidget(bar_owner)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    for _ in range(3):
        QApplication.processEvents()
    neighbour.paints = 0
    neighbour.update()  # waits, as the table's and the waveform's updates wait, for the next frame
    return window, neighbour  # the window is kept by the caller (its widgets die with it)


def test_a_new_level_on_the_meter_does_not_paint_the_window_at_once(qtbot):
    panel = RecordPanel()
    _window, neighbour = window_with(panel, qtbot)
    panel.show_status(LiveStatus(3.0, 0.5, False, 0.0, 0.0, 0))
    assert panel.meter.value() > 0 and panel.meter.updatesEnabled(), "the meter is never painted again"
    assert neighbour.paints == 0, "the meter's value painted the whole window inside the tick"
    qtbot.waitUntil(lambda: neighbour.paints >= 1)  # with the next frame


def test_a_runs_progress_does_not_paint_the_window_at_once(qtbot):
    panel = ProgressPanel()
    _window, neighbour = window_with(panel, qtbot)
    panel.start("Starting transcription", "transcribe")
    for _ in range(3):
        QApplication.processEvents()
    neighbour.paints = 0
    neighbour.update()
    panel.update_progress(Progress(Stage.INFER, 4, 10))
    assert panel.bar.value() > 0 and panel.bar.updatesEnabled(), "the bar is never painted again"
    assert neighbour.paints == 0, "the progress bar painted the whole window inside the update"
    qtbot.waitUntil(lambda: neighbour.paints >= 1)  # with the next frame
