"""What the waveform draws over the recording and what a click on it says: the playhead, the
selected line, the chosen range, the lanes' room, the theme's colours, the legend and the names a
screen reader reads."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication
from qt_helpers import shown_waveform

from app.envelope import EnvelopePyramid
from app.speakers import Lane
from app.widgets.waveform_view import WaveformView

RED = QColor("#D7263D")


@pytest.fixture(scope="module")
def minute() -> EnvelopePyramid:
    quiet = np.zeros(16000 * 60, dtype=np.float32)  # silence: nothing but the marks is drawn
    return EnvelopePyramid.build(quiet, 16000)


def shown(qtbot, audio: EnvelopePyramid | None = None) -> WaveformView:
    """An 800 × 240 waveform on screen, with `audio` loaded (none: an empty view)."""
    return shown_waveform(qtbot, audio, (800, 240))


@pytest.fixture
def view(qtbot, minute) -> WaveformView:
    return shown(qtbot, minute)


def x_of(view: WaveformView, t: float) -> int:
    return view.mapFromScene(view.vb.mapViewToScene(QPointF(t, 0.0))).x()


def y_of(view: WaveformView, y: float) -> int:
    return view.mapFromScene(view.vb.mapViewToScene(QPointF(0.0, y))).y()


def columns_like(image: QImage, colour: QColor, y: int, tolerance: int = 40) -> list[int]:
    """The x of every pixel on row `y` within `tolerance` (per channel) of `colour`."""
    want = (colour.red(), colour.green(), colour.blue())

    def near(x: int) -> bool:
        c = image.pixelColor(x, y)
        return max(abs(a - b) for a, b in zip((c.red(), c.green(), c.blue()), want, strict=True)) <= tolerance

    return [x for x in range(image.width()) if near(x)]


def shaded(before: QImage, after: QImage, y: int) -> list[int]:
    """The x of every pixel on row `y` that a mark changed."""
    return [x for x in range(after.width()) if after.pixelColor(x, y) != before.pixelColor(x, y)]


def hue_at(image: QImage, x: int, y: int) -> str:
    c = image.pixelColor(x, y)
    if c.blue() > max(c.red(), c.green()):
        return "blue"
    return "yellow" if min(c.red(), c.green()) > c.blue() else "?"


def test_the_playhead_is_a_red_line_at_its_time_over_the_marks_and_goes_away_without_one(view):
    view.set_selection(20.0, 40.0)
    view.set_range(25.0, 35.0)
    view.set_playhead(30.0)
    image = view.grab().toImage()
    red = columns_like(image, RED, y_of(view, 0.5))
    assert red and all(abs(x - x_of(view, 30.0)) <= 2 for x in red), "no red line at 0:30, or elsewhere"
    assert columns_like(image, RED, y_of(view, -1.3)), "the playhead does not reach down over the lanes"
    view.set_playhead(None)
    assert not columns_like(view.grab().toImage(), RED, y_of(view, 0.5))


def test_speech_is_shaded_green_over_the_waveforms_height_only(view):
    blank = view.grab().toImage()
    view.set_speech([10.0], [20.0])
    image, x = view.grab().toImage(), x_of(view, 15.0)
    bg, fill = QColor("#FBFCFD"), QColor("#7FC8A9")
    blend = [round(b + (f - b) * 70 / 255) for b, f in zip(bg.getRgb()[:3], fill.getRgb()[:3], strict=True)]
    c = image.pixelColor(x, y_of(view, 0.5))
    assert max(abs(a - b) for a, b in zip((c.red(), c.green(), c.blue()), blend, strict=True)) <= 2
    for y in (0.97, -0.97):
        assert image.pixelColor(x, y_of(view, y)) == c, "speech not shaded to the waveform's edge"
    for y in (1.03, -1.03):
        assert image.pixelColor(x, y_of(view, y)) == blank.pixelColor(x, y_of(view, y)), "shaded beyond it"


def test_the_selected_line_is_shaded_yellow_over_its_time_only_and_cleared(view):
    blank, row = view.grab().toImage(), y_of(view, 0.5)
    view.set_selection(10.0, 20.0)
    image = view.grab().toImage()
    marked = shaded(blank, image, row)
    assert marked and abs(min(marked) - x_of(view, 10.0)) <= 2 and abs(max(marked) - x_of(view, 20.0)) <= 2
    assert len(marked) >= x_of(view, 20.0) - x_of(view, 10.0) - 2  # the whole line's time
    assert hue_at(image, x_of(view, 15.0), row) == "yellow"
    assert columns_like(image, QColor("#E0A100"), row, tolerance=30), "no darker outline at its edges"
    assert shaded(blank, image, y_of(view, -1.3)), "the selection does not reach down over the lanes"
    view.set_selection(10.0)  # no end: nothing selected
    assert not shaded(blank, view.grab().toImage(), row)


def test_a_chosen_range_is_shaded_blue_kept_inside_the_recording_and_a_tiny_one_is_none(view):
    blank, row = view.grab().toImage(), y_of(view, 0.5)
    view.set_range(-5.0, 30.0)
    assert view.marked_range == (0.0, 30.0)
    image = view.grab().toImage()
    marked = shaded(blank, image, row)
    assert marked and abs(min(marked) - x_of(view, 0.0)) <= 2 and abs(max(marked) - x_of(view, 30.0)) <= 2
    assert len(marked) >= x_of(view, 30.0) - x_of(view, 0.0) - 2
    assert hue_at(image, x_of(view, 15.0), row) == "blue"
    assert columns_like(image, QColor("#1F6FB2"), row, tolerance=30), "no outline at its edges"
    view.set_range(50.0, 90.0)
    assert view.marked_range == (50.0, 60.0)  # the recording ends at 1:00
    view.set_range(0.0, 0.02)  # the deepest zoom's span is still a range
    assert view.marked_range == (0.0, 0.02)
    view.set_range(10.0, 10.01)
    assert view.marked_range is None and not shaded(blank, view.grab().toImage(), row)
    view.set_range(10.0, 20.0)
    view.set_range(10.0)
    assert view.marked_range is None
    view.set_range(None, 20.0)
    assert view.marked_range is None


def test_a_range_reaching_past_the_recording_is_cut_to_it_and_is_none_when_too_little_is_left(view):
    view.set_range(59.0, 70.0)
    assert view.marked_range == (59.0, 60.0)
    view.set_range(59.99, 70.0)  # 10 ms of the recording: less than the deepest zoom shows
    assert view.marked_range is None
    view.set_range(70.0, 90.0)  # all of it after the end: not a range ending before it starts
    assert view.marked_range is None
    view.set_range(-3.0, 0.01)
    assert view.marked_range is None


def test_without_a_recording_a_range_keeps_its_end_and_clicks_say_nothing(qtbot):
    view = shown(qtbot)
    view.set_range(2.0, 500.0)
    assert view.marked_range == (2.0, 500.0)
    clicks: list[float] = []
    view.clicked.connect(clicks.append)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(400, 100))
    assert clicks == []


def test_a_double_click_plays_from_its_time_a_right_click_does_nothing_and_times_stay_inside(view, qtbot):
    view.show_range(10.0, 50.0)
    at = QPoint(x_of(view, 30.0), 100)
    with qtbot.waitSignal(view.activated) as played:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=at)
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=at)
        qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert played.args[0] == pytest.approx(30.0, abs=0.2)
    qtbot.wait(QApplication.doubleClickInterval() + 50)
    heard: list[float] = []
    view.clicked.connect(heard.append)
    view.activated.connect(heard.append)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.RightButton, pos=QPoint(x_of(view, 30.0), 100))
    assert heard == [] and QApplication.activePopupWidget() is None  # no plot menu either
    view.show_all()
    view.vb.setLimits(xMin=None, xMax=None)
    view.vb.setXRange(-10.0, 70.0, padding=0.0)  # room outside the recording on both sides
    qtbot.wait(QApplication.doubleClickInterval() + 50)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x_of(view, 66.0), 100))
    qtbot.wait(QApplication.doubleClickInterval() + 50)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x_of(view, -6.0), 100))
    assert heard == [60.0, 0.0]


def test_a_click_on_a_recording_shorter_than_a_second_reports_its_time(qtbot):
    view = shown(qtbot, EnvelopePyramid.build(np.zeros(8000, dtype=np.float32), 16000))  # half a second
    with qtbot.waitSignal(view.clicked) as clicked:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x_of(view, 0.25), 100))
    assert clicked.args[0] == pytest.approx(0.25, abs=0.01)
    assert view.getPlotItem().getAxis("bottom").style["showValues"]  # its time labels shown too


def test_every_lane_and_the_chunk_bar_fit_the_height_whatever_the_number_of_lanes(view):
    for n in (0, 1, 4):
        view.set_lanes([Lane(f"S{i}", "#4E79A7", (0.0,), (5.0,), f"s{i}") for i in range(n)])
        y0, y1 = view.vb.viewRange()[1]
        assert y0 < view.lanes.bottom() - 0.02 and y1 >= 1.3  # the last lane whole, the bar whole
        assert y0 > view.lanes.bottom() - 0.1 and y1 <= 1.35  # and no empty band under or over them


def test_the_light_colours_hold_until_a_theme_swaps_the_background_and_both_axes(view):
    bottom, left = view.getPlotItem().getAxis("bottom"), view.lane_axis
    light = view.grab().toImage()
    assert light.pixelColor(x_of(view, 45.0), y_of(view, -0.5)) == QColor("#FBFCFD")
    assert bottom.pen().color() == QColor("#9AA3AD") and bottom.textPen().color() == QColor("#4A5560")
    assert left.pen().color() == QColor("#D9DEE3") and left.textPen().color() == QColor("#1F2933")
    assert left.width() == 96 and left.style["tickLength"] == 0  # a fixed header, no tick marks
    dark = {"#FBFCFD": "#101418", "#D9DEE3": "#303840", "#1F2933": "#E6EAEE", "#9AA3AD": "#56606A",
            "#4A5560": "#B8C0C8"}  # fmt: skip
    view.set_theme(lambda colour: dark[colour])
    image = view.grab().toImage()
    assert image.pixelColor(x_of(view, 45.0), y_of(view, -0.5)) == QColor("#101418")
    assert bottom.pen().color() == QColor("#56606A") and bottom.textPen().color() == QColor("#B8C0C8")
    assert left.pen().color() == QColor("#303840") and left.textPen().color() == QColor("#E6EAEE")


def test_the_view_tells_a_screen_reader_what_it_is_and_shows_its_legend_in_the_header(qtbot):
    view = shown(qtbot)
    assert view.accessibleName() == "Waveform" and view.viewport().accessibleName() == "Waveform"
    assert "Plus and minus zoom" in view.accessibleDescription()
    assert view.focusPolicy() == Qt.FocusPolicy.StrongFocus and view.minimumHeight() == 90
    legend = view.key_label
    assert legend.accessibleName() == "Legend: speech regions, chunks, playhead"
    assert (legend.x(), legend.y()) == (6, 6) and legend.x() + legend.width() <= 96  # inside the header
    assert legend.height() >= 3 * legend.fontMetrics().height()  # its three rows shown
    assert view.lane_axis._tickLevels == [[], []]  # an empty header, no numbers
    assert view.marked_range is None and view.duration == 0.0
    assert legend.parentWidget() is view and legend.isVisible()
    assert all(word in legend.text() for word in ("speech", "chunk", "playhead"))
    assert not view.getPlotItem().getAxis("bottom").style["showValues"]  # no "0:00" before a recording
