"""The waveform view: regions, chunks, lanes, zoom and pan by mouse and keys, clicks to times."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QApplication
from qt_helpers import shown_waveform

from app.envelope import EnvelopePyramid
from app.speakers import Lane
from app.widgets.waveform_view import WaveformView


@pytest.fixture(scope="module")
def hour() -> EnvelopePyramid:
    rng = np.random.default_rng(0)
    second = (rng.standard_normal(16000) * 0.05).astype(np.float32)
    return EnvelopePyramid.build(np.tile(second, 3600), 16000)


@pytest.fixture
def view(qtbot, hour) -> WaveformView:
    w = shown_waveform(qtbot, hour)
    w.set_speech(np.arange(0, 3600, 10.0), np.arange(0, 3600, 10.0) + 6)
    w.set_chunks([(i, i * 300.0, i * 300.0 + 290) for i in range(12)])
    return w


def test_whole_hour_is_shown_with_clock_labels(view):
    assert view.visible_range() == pytest.approx((0, 3600), abs=1)
    labels = view.getPlotItem().getAxis("bottom").tickStrings([0, 1800, 3600], 1, 600)
    assert labels == ["0:00", "30:00", "1:00:00"]


def test_keys_zoom_and_pan_and_stay_inside_the_recording(view, qtbot):
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    x0, x1 = view.visible_range()
    assert x1 - x0 == pytest.approx(3600 / 2.25, rel=0.01)
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert view.visible_range()[0] > x0
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert view.visible_range()[1] == pytest.approx(3600, abs=0.5)
    qtbot.keyClick(view, Qt.Key.Key_0)
    assert view.visible_range() == pytest.approx((0, 3600), abs=1)


def test_zooming_to_milliseconds_shows_the_waveform_of_that_moment(view, hour):
    view.show_range(1234.5, 1234.55)
    assert view.visible_range() == pytest.approx((1234.5, 1234.55), abs=0.005)
    drawn = view.grab().toImage()
    view.set_audio(None)  # the same view with no waveform: what the user would see without one
    view.show_range(1234.5, 1234.55)
    blank = view.grab().toImage()
    changed = sum(
        drawn.pixel(x, y) != blank.pixel(x, y) for x in range(0, drawn.width(), 4) for y in range(0, 120, 2)
    )
    assert changed > 200, "no waveform is drawn at millisecond zoom"


def test_a_click_reports_the_time_under_the_mouse(view, qtbot):
    view.show_range(100, 200)
    x = view.mapFromScene(view.vb.mapViewToScene(QPointF(150.0, 0.0))).x()
    with qtbot.waitSignal(view.clicked) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 100))
    assert blocker.args[0] == pytest.approx(150.0, abs=0.5)


def test_lanes_add_rows_below_the_waveform(view):
    before = view.vb.viewRange()[1][0]
    view.set_lanes([Lane("A", "#ff0000", (1.0,), (2.0,)), Lane("B", "#00ff00", (2.0,), (3.0,)),
                    Lane("C", "#0000ff", (), ())])  # fmt: skip
    assert len(view.lanes.lanes) == 3 and view.vb.viewRange()[1][0] < before


def test_ensure_visible_pans_to_an_offscreen_selection(view):
    view.show_range(0, 60)
    view.ensure_visible(2000, 2010)
    x0, x1 = view.visible_range()
    assert x0 <= 2000 and x1 >= 2010 and x1 - x0 == pytest.approx(60, abs=0.5)


def _drag(view: WaveformView, a: float, b: float, modifiers: Qt.KeyboardModifier) -> None:
    def at(t: float) -> QPointF:
        return QPointF(view.mapFromScene(view.vb.mapViewToScene(QPointF(t, 0.0))))

    viewport, left = view.viewport(), Qt.MouseButton.LeftButton
    kinds = [(QMouseEvent.Type.MouseButtonPress, at(a), left)]
    kinds += [(QMouseEvent.Type.MouseMove, at(a + (b - a) * k / 6), left) for k in range(1, 7)]
    kinds += [(QMouseEvent.Type.MouseButtonRelease, at(b), Qt.MouseButton.NoButton)]
    for kind, pos, buttons in kinds:
        event = QMouseEvent(kind, pos, viewport.mapToGlobal(pos), left, buttons, modifiers)
        QApplication.sendEvent(viewport, event)


def test_shift_drag_marks_a_range_and_a_plain_drag_still_pans(view, qtbot):
    view.show_range(100.0, 200.0)
    with qtbot.waitSignal(view.range_selected) as marked:
        _drag(view, 120.0, 150.0, Qt.KeyboardModifier.ShiftModifier)
    start, end = marked.args
    assert start == pytest.approx(120.0, abs=0.5) and end == pytest.approx(150.0, abs=0.5)
    assert view.visible_range() == pytest.approx((100.0, 200.0), abs=0.01)  # no pan while marking
    qtbot.wait(QApplication.doubleClickInterval() + 50)  # not a double click
    _drag(view, 150.0, 120.0, Qt.KeyboardModifier.NoModifier)
    assert view.visible_range()[0] > 110.0  # a plain drag pans
    assert view.marked_range == (start, end)
    view.show_range(3500.0, 3600.0)
    qtbot.wait(QApplication.doubleClickInterval() + 50)
    _drag(view, 3590.0, 3510.0, Qt.KeyboardModifier.NoModifier)  # dragged on past the end
    assert view.visible_range() == pytest.approx((3500.0, 3600.0), abs=0.5)


def test_lane_names_are_the_left_header_and_chunk_labels_stay_apart(view):
    view.set_lanes(
        [Lane("Alice", "#4E79A7", (0.0,), (5.0,), "a"), Lane("Bob", "#E15759", (5.0,), (9.0,), "b")]
    )
    assert [name for _, name in view.lane_axis._tickLevels[0]] == ["Alice", "Bob"]
    view.show_all()  # 12 chunks over an hour at 1000 px: every label fits its bar here
    view.grab()
    drawn = view.chunk_marks.drawn_labels
    assert [text for text, _, _ in drawn] == [f"chunk {i + 1}" for i in range(12)]
    for (_, _, x1), (_, next_x0, _) in pairwise(drawn):
        assert x1 < next_x0  # apart: each ends before the next begins
    for (_, x0, x1), (_, start, end) in zip(drawn, view.chunk_marks.chunks, strict=True):
        assert start <= x0 and x1 <= end  # inside its own bar


def test_chunk_labels_follow_the_zoom_and_shorten_when_bars_are_narrow(view, qtbot):
    view.show_range(400.0, 1000.0)  # chunks 2 (300-590), 3 (600-890) and 4 (900-1190)
    view.grab()
    drawn = view.chunk_marks.drawn_labels
    assert [text for text, _, _ in drawn] == ["chunk 2", "chunk 3", "chunk 4"]
    assert drawn[0][1] == pytest.approx(400.0)  # the cut bar's label starts at the left edge
    assert drawn[1][1] == pytest.approx(600.0) and drawn[2][1] == pytest.approx(900.0)
    view.resize(500, 300)  # 12 bars in 500 px: about 40 px each, too narrow for "chunk N"
    view.show_all()
    qtbot.wait(50)
    view.grab()
    texts = [text for text, _, _ in view.chunk_marks.drawn_labels]
    assert texts and all(text.isdigit() for text in texts)
    assert texts == sorted(texts, key=int)


def _wheel(view: WaveformView, t: float, notches: int) -> None:
    pos = QPointF(view.mapFromScene(view.vb.mapViewToScene(QPointF(t, 0.0))).x(), 100.0)
    viewport = view.viewport()
    event = QWheelEvent(pos, viewport.mapToGlobal(pos), QPoint(0, 0), QPoint(0, 120 * notches),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase,
                        False)  # fmt: skip
    QApplication.sendEvent(viewport, event)


def test_the_mouse_wheel_zooms_around_the_time_under_the_mouse(view):
    view.show_range(1000.0, 2000.0)
    height = view.vb.viewRange()[1]
    _wheel(view, 1250.0, 1)  # a quarter of the way in
    assert view.vb.viewRange()[1] == pytest.approx(height)  # time only: the lanes keep their height
    x0, x1 = view.visible_range()
    assert x1 - x0 < 1000.0 * 0.95, "the wheel did not zoom in"
    assert (1250.0 - x0) / (x1 - x0) == pytest.approx(0.25, abs=0.02)  # the time under the mouse stays put
    _wheel(view, 1250.0, -3)
    y0, y1 = view.visible_range()
    assert y1 - y0 > x1 - x0 and y0 <= 1250.0 <= y1
    _wheel(view, 1800.0, -40)  # far out: never beyond the recording
    assert view.visible_range() == pytest.approx((0, 3600), abs=1)
    assert view.vb.viewRange()[1] == pytest.approx(height)  # time only: the lanes keep their height
    _wheel(view, 1000.0, 60)  # far in: no deeper than 20 ms
    assert view.visible_range()[1] - view.visible_range()[0] == pytest.approx(0.02, rel=0.01)


def test_an_edit_that_moves_no_lane_name_keeps_the_drawn_header_and_a_rename_redraws_it(view):
    lanes = [Lane("Alice", "#4E79A7", (0.0,), (5.0,), "a"), Lane("Bob", "#E15759", (5.0,), (9.0,), "b")]
    view.set_lanes(lanes)
    view.grab()
    drawn = view.lane_axis.picture
    assert drawn is not None
    split = Lane("Alice", "#4E79A7", (0.0, 2.0), (2.0, 5.0), "a")  # a split turn: the same names
    view.set_lanes([split, lanes[1]])
    assert view.lane_axis.picture is drawn  # not drawn again: each edit of a line sets the lanes
    view.set_lanes([Lane("Ann", "#4E79A7", (0.0,), (5.0,), "a"), lanes[1]])
    assert view.lane_axis.picture is None  # the rename is drawn at the next paint
    view.grab()
    assert [name for _, name in view.lane_axis._tickLevels[0]] == ["Ann", "Bob"]
