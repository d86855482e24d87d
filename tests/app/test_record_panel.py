"""The recording bar on its own: the microphone list, Record/Stop and Pause/Resume, the level meter
in dBFS, the elapsed time, and the note on how far the live lines trail the audio."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.recording.panel import RecordPanel, meter_value
from engine.live.session import LiveStatus


def status(seconds: float = 0.0, level: float = 0.0, *, paused: bool = False, behind: float = 0.0,
           loading: bool = False) -> LiveStatus:  # fmt: skip
    return LiveStatus(seconds, level, paused, behind, 0.0, 0, loading)


class Window(QWidget):
    """The window around the bar: the keys the bar passes on arrive here."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[int] = []
        self.panel = RecordPanel(self)
        QVBoxLayout(self).addWidget(self.panel)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        self.keys.append(event.key())


def shown(qtbot) -> Window:
    window = Window()
    qtbot.addWidget(window)
    window.resize(900, 50)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_the_meter_reads_the_peak_on_a_sixty_decibel_scale():
    assert [meter_value(p) for p in (0.0, -0.5, 0.0001, 0.001, 0.1, 0.5, 1.0, 1.5)] == [
        0, 0, 0, 0, 67, 90, 100, 100,  # silence, -80, -60, -20, -6 and 0 dBFS, and a clipped peak
    ]  # fmt: skip


def test_before_recording_the_bar_says_record_and_only_the_microphone_and_record_are_live(qtbot):
    window = shown(qtbot)
    panel = window.panel
    labels = [w.text() for w in panel.findChildren(QLabel) if w.isVisible()]
    assert labels == ["Microphone:", "0:00.0", ""]
    assert panel.record_button.text() == "● Record" and panel.pause_button.text() == "Pause"
    assert panel.captions_button.text() == "Captions"
    assert panel.devices.isEnabled() and panel.record_button.isEnabled()
    assert not panel.pause_button.isEnabled()
    assert (panel.meter.value(), panel.meter.isTextVisible()) == (0, False)  # a level, not a percentage


def test_recording_locks_the_microphone_and_stopping_resets_pause_and_the_meter(qtbot):
    window = shown(qtbot)
    panel = window.panel
    panel.set_recording(True)
    assert panel.record_button.text() == "■ Stop"
    assert (panel.devices.isEnabled(), panel.pause_button.isEnabled()) == (False, True)
    QTest.mouseClick(panel.pause_button, Qt.MouseButton.LeftButton)
    panel.show_status(status(2.0, 0.5))
    panel.set_recording(False)
    assert panel.record_button.text() == "● Record"
    assert (panel.devices.isEnabled(), panel.pause_button.isEnabled()) == (True, False)
    assert not panel.pause_button.isChecked() and panel.pause_button.text() == "Pause"
    assert panel.meter.value() == 0


def test_the_buttons_emit_record_pause_resume_and_captions(qtbot):
    window = shown(qtbot)
    panel = window.panel
    heard: list[object] = []
    panel.record_clicked.connect(lambda: heard.append("record"))
    panel.pause_toggled.connect(heard.append)
    panel.captions_clicked.connect(lambda: heard.append("captions"))
    QTest.mouseClick(panel.record_button, Qt.MouseButton.LeftButton)
    panel.set_recording(True)
    QTest.mouseClick(panel.pause_button, Qt.MouseButton.LeftButton)
    assert panel.pause_button.text() == "Resume"
    QTest.mouseClick(panel.pause_button, Qt.MouseButton.LeftButton)
    assert panel.pause_button.text() == "Pause"
    QTest.mouseClick(panel.captions_button, Qt.MouseButton.LeftButton)
    assert heard == ["record", True, False, "captions"]


def test_the_status_shows_the_level_the_time_and_how_far_behind_the_lines_are(qtbot):
    window = shown(qtbot)
    panel = window.panel
    panel.set_recording(True)
    seen = []
    for s in (status(0.0, 0.1, loading=True, behind=9), status(61.25, 1.0, behind=3.0),
              status(3725.0, 0.5, behind=12.4), status(3726.0, 0.5, paused=True, behind=1.0),
              status(3727.0, 0.0)):  # fmt: skip
        panel.show_status(s)
        full = panel.meter.value() == panel.meter.maximum()
        seen.append((panel.meter.value(), full, panel.elapsed.text(), panel.lag.text()))
    assert seen == [
        (67, False, "0:00.0", "Loading models…"),
        (100, True, "1:01.2", ""),  # 0 dBFS fills the meter; 3 s behind is not worth a note
        (90, False, "1:02:05.0", "Transcript 12 s behind"),
        (0, False, "1:02:06.0", ""),  # paused: no level
        (0, False, "1:02:07.0", ""),
    ]


def test_the_microphone_list_keeps_the_remembered_input_when_it_is_there(qtbot):
    window = shown(qtbot)
    panel = window.panel
    assert panel.device_name() is None  # no inputs
    chosen: list[str] = []
    panel.devices.currentTextChanged.connect(chosen.append)  # what the window remembers
    panel.set_devices(["Built-in", "USB headset"], "USB headset")
    assert [panel.devices.itemText(i) for i in range(panel.devices.count())] == ["Built-in", "USB headset"]
    assert panel.device_name() == "USB headset"
    panel.set_devices(["Built-in", "Line in"], "USB headset")  # unplugged since
    assert panel.device_name() == "Built-in"
    assert chosen == []  # listing the inputs is not choosing one
    panel.devices.setCurrentIndex(1)
    assert chosen == ["Line in"]


def test_escape_on_the_bar_does_nothing_and_other_keys_reach_the_window(qtbot):
    window = shown(qtbot)
    QTest.keyClick(window.panel, Qt.Key.Key_Escape)
    QTest.keyClick(window.panel, Qt.Key.Key_Space)
    assert window.keys == [Qt.Key.Key_Space]


def test_a_screen_reader_names_each_control_of_the_bar(qtbot):
    window = shown(qtbot)
    panel = window.panel
    parts = (panel, panel.devices, panel.record_button, panel.pause_button, panel.meter, panel.elapsed)
    parts += (panel.lag,)
    assert [w.accessibleName() for w in parts] == [
        "Recording", "Microphone", "Record or stop", "Pause or resume recording", "Input level",
        "Elapsed time", "Live transcription delay",
    ]  # fmt: skip
    assert panel.devices.toolTip() == "The input to record from (remembered)"
    assert panel.captions_button.toolTip() == "Show the live lines in a large window (a second screen)"


def test_the_bar_lies_in_its_window_with_a_fixed_meter_and_a_steady_clock(qtbot):
    window = shown(qtbot)
    panel = window.panel
    assert panel.record_button.window() is window
    assert RecordPanel(window).parent() is window  # a child of the window before any layout takes it
    inner = panel.contentsRect().adjusted(8, 4, -8, -4)  # the bar's own margins
    first = panel.findChildren(QLabel)[0]
    assert first.geometry().topLeft() == inner.topLeft() and first.geometry().bottom() == inner.bottom()
    assert panel.captions_button.geometry().right() == inner.right()  # Captions at the far end
    assert (panel.meter.width(), panel.elapsed.width()) == (160, 70)  # the clock's digits do not push
    window.resize(400, 50)
    assert (panel.meter.width(), panel.elapsed.width()) == (160, 70)
