"""Moving about the waveform: each key's zoom or pan step, the deepest zoom, showing a line, the
time axis' labels, and the lane names as the window's height changes."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QFontMetrics, QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QApplication, QWidget
from qt_helpers import shown_waveform

from app.envelope import EnvelopePyramid
from app.speakers import Lane
from app.widgets.waveform_view import WaveformView


@pytest.fixture(scope="module")
def ten_minutes() -> EnvelopePyramid:
    rng = np.random.default_rng(1)
    return EnvelopePyramid.build((rng.standard_normal(16000 * 600) * 0.05).astype(np.float32), 16000)


@pytest.fixture
def view(qtbot, ten_minutes) -> WaveformView:
    w = shown_waveform(qtbot, ten_minutes)
    w.setFocus()
    return w


def span(view: WaveformView) -> float:
    x0, x1 = view.visible_range()
    return x1 - x0


def test_each_key_zooms_or_pans_by_its_step_around_the_middle(view, qtbot):
    view.show_range(200.0, 400.0)
    qtbot.keyClick(view, Qt.Key.Key_Equal)  # = is + without Shift
    assert view.visible_range() == pytest.approx((300 - 200 / 3, 300 + 200 / 3), abs=0.01)
    qtbot.keyClick(view, Qt.Key.Key_Minus)
    assert view.visible_range() == pytest.approx((200.0, 400.0), abs=0.01)
    qtbot.keyClick(view, Qt.Key.Key_Minus)
    assert view.visible_range() == pytest.approx((150.0, 450.0), abs=0.01)
    qtbot.keyClick(view, Qt.Key.Key_Left)
    assert view.visible_range() == pytest.approx((90.0, 390.0), abs=0.01)  # a fifth of the view
    qtbot.keyClick(view, Qt.Key.Key_Right)
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert view.visible_range() == pytest.approx((210.0, 510.0), abs=0.01)
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert view.visible_range() == pytest.approx((300.0, 600.0), abs=0.01)
    qtbot.keyClick(view, Qt.Key.Key_Right)  # already at the end
    assert view.visible_range() == pytest.approx((300.0, 600.0), abs=0.01)
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.visible_range() == pytest.approx((0.0, 300.0), abs=0.01)
    qtbot.keyClick(view, Qt.Key.Key_Left)  # already at the start
    assert view.visible_range() == pytest.approx((0.0, 300.0), abs=0.01)


class Window(QWidget):
    """A parent that notes the keys its child let through."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[int] = []

    def keyPressEvent(self, event: QKeyEvent) -> None:
        self.keys.append(event.key())


def test_a_key_the_waveform_does_not_use_moves_nothing_and_goes_on_to_the_window(qtbot, ten_minutes):
    window = Window()
    qtbot.addWidget(window)
    view = WaveformView(window)
    view.resize(1000, 300)
    window.show()
    view.set_audio(ten_minutes)
    view.show_range(200.0, 400.0)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_A)
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    assert view.visible_range() == pytest.approx((300 - 200 / 3, 300 + 200 / 3), abs=0.01)
    assert window.keys == [Qt.Key.Key_A]  # + is the waveform's own


def test_zooming_in_stops_at_twenty_milliseconds_and_out_at_the_whole_recording(view):
    view.show_range(300.0, 300.1)
    view.zoom(100.0)
    assert span(view) == pytest.approx(0.02, abs=1e-4)
    assert view.visible_range()[0] == pytest.approx(300.04, abs=1e-3)  # around the middle
    view.zoom(1e-6)
    assert view.visible_range() == pytest.approx((0.0, 600.0), abs=0.01)
    view.zoom(4.0, centre=590.0)  # near the end: the view stays inside the recording
    assert view.visible_range() == pytest.approx((450.0, 600.0), abs=0.01)
    view.zoom(1.0, centre=5.0)
    assert view.visible_range() == pytest.approx((0.0, 150.0), abs=0.01)


def test_showing_a_line_leaves_a_view_that_has_it_and_widens_one_too_short_for_it(view):
    view.show_range(100.0, 160.0)
    view.ensure_visible(100.0, 160.0)  # exactly on screen already
    assert view.visible_range() == pytest.approx((100.0, 160.0), abs=0.01)
    view.ensure_visible(300.0, 400.0)  # longer than the view: half as much again, centred
    assert view.visible_range() == pytest.approx((275.0, 425.0), abs=0.01)
    view.ensure_visible(590.0, 595.0)  # at the end: the view ends with the recording
    assert view.visible_range() == pytest.approx((450.0, 600.0), abs=0.01)
    view.ensure_visible(0.0, 5.0)  # at the start: the view starts with the recording
    assert view.visible_range() == pytest.approx((0.0, 150.0), abs=0.01)


def test_the_time_axis_counts_in_clock_steps_for_the_span_shown_and_leaves_times_before_zero_blank(view):
    axis = view.getPlotItem().getAxis("bottom")
    assert axis.style["showValues"]
    assert axis.tickSpacing(10800.0, 0.0, 1000.0) == [(1800.0, 0.0), (900.0, 0.0)]  # 3 hours: half hours
    assert axis.tickSpacing(7200.0, 3600.0, 1000.0) == [(600.0, 0.0), (300.0, 0.0)]  # 1 to 2 hours
    assert axis.tickSpacing(0.0, 2.0, 1000.0) == [(0.2, 0.0), (0.1, 0.0)]  # 2 s: fifths, tenths
    assert axis.tickStrings([-1.0, 0.0, 90.0], 1.0, 30.0) == ["", "0:00", "1:30"]
    assert axis.tickStrings([1.25], 1.0, 0.5) == ["0:01.2"]  # tenths under a second apart
    view.set_audio(None)
    assert not axis.style["showValues"] and view.duration == 0.0  # no "0:00" row without a recording


def test_thin_lanes_name_every_other_speaker_and_a_taller_window_names_them_all(view, qtbot):
    names = [f"Speaker {i}" for i in range(8)]
    view.set_lanes([Lane(name, "#4E79A7", (0.0,), (5.0,), name) for name in names])
    labelled = [name for _, name in view.lane_axis._tickLevels[0]]
    assert labelled == names  # 8 lanes in 300 px: room for each name
    view.resize(1000, 150)
    qtbot.waitUntil(lambda: len(view.lane_axis._tickLevels[0]) < len(names))
    thin = [name for _, name in view.lane_axis._tickLevels[0]]
    assert thin[0] == "Speaker 0" and set(thin) < set(names) and len(thin) >= 2
    view.resize(1000, 600)
    qtbot.waitUntil(lambda: [name for _, name in view.lane_axis._tickLevels[0]] == names)


def test_a_long_speaker_name_is_cut_short_inside_the_header(view):
    view.set_lanes([Lane("Professor Bartholomew Featherstonehaugh", "#4E79A7", (0.0,), (5.0,), "p")])
    ((_, label),) = view.lane_axis._tickLevels[0]
    assert label.endswith("…") and QFontMetrics(view.lane_axis.font()).horizontalAdvance(label) <= 96 - 10
    assert len(label) > 6  # cut at the header's width, not to nothing


def test_dragging_on_the_lane_header_does_not_move_the_time(view):
    view.show_range(200.0, 400.0)
    viewport, left, plain = view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    header = view.mapFromScene(view.lane_axis.sceneBoundingRect().center())
    y = float(header.y())
    points = [QPointF(40.0, y), QPointF(60.0, y), QPointF(80.0, y), QPointF(90.0, y)]
    kinds = [QMouseEvent.Type.MouseButtonPress] + [QMouseEvent.Type.MouseMove] * 2
    kinds += [QMouseEvent.Type.MouseButtonRelease]
    for kind, pos in zip(kinds, points, strict=True):
        buttons = Qt.MouseButton.NoButton if kind == QMouseEvent.Type.MouseButtonRelease else left
        event = QMouseEvent(kind, pos, viewport.mapToGlobal(pos), left, buttons, plain)
        QApplication.sendEvent(viewport, event)
    assert view.visible_range() == pytest.approx((200.0, 400.0), abs=0.01)
