"""The waveform of a recording in progress: shown at widths that grow in steps, so a redraw a second
does not rescale the view (and draw every item again); a view the user zoomed stays put; 0 follows
the recording again; the finished file is shown whole."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from qt_helpers import shown_waveform

from app.envelope import EnvelopePyramid
from app.timeline import grown_span
from app.widgets.waveform_view import MIN_SPAN

RATE = 16_000


def recorded(seconds: float) -> EnvelopePyramid:
    return EnvelopePyramid.build(np.full(int(seconds * RATE), 0.1, np.float32), RATE)


def test_widths_step_up_from_half_a_minute_to_whole_hours():
    assert [grown_span(t) for t in (0.0, 12.0, 30.0, 30.5, 61.0, 299.0, 3600.0)] == [
        30.0, 30.0, 30.0, 60.0, 120.0, 300.0, 3600.0
    ]  # fmt: skip
    assert grown_span(3600.5) == 7200.0 and grown_span(3 * 3600 + 1) == 4 * 3600.0


def test_a_growing_recording_keeps_its_scale_until_it_outgrows_the_step(qtbot):
    # catches: the view rescaled to the recording's length at every redraw (every item of the
    # waveform drawn again once a second while recording); a step never widened
    view = shown_waveform(qtbot)
    rescaled: list[object] = []
    view.vb.sigXRangeChanged.connect(lambda *_: rescaled.append(view.visible_range()))
    first = recorded(10.0)
    view.grow_audio(first)
    assert view.visible_range() == pytest.approx((0.0, 30.0), abs=1e-6) and view.duration == 10.0
    assert view.envelope.pyramid is first and view.getPlotItem().getAxis("bottom").style["showValues"]
    rescaled.clear()
    view.grow_audio(recorded(20.0))
    view.grow_audio(recorded(29.0))
    assert rescaled == [] and view.duration == 29.0
    view.grow_audio(recorded(31.0))
    assert view.visible_range() == pytest.approx((0.0, 60.0), abs=1e-6)


def test_a_view_zoomed_while_recording_stays_and_0_follows_the_recording_again(qtbot):
    # catches: the recording's redraw snapping a zoomed view back to the whole recording; 0
    # (show everything) leaving the view behind the recording as it grows
    view = shown_waveform(qtbot)
    view.grow_audio(recorded(20.0))
    view.show_range(2.0, 5.0)
    view.grow_audio(recorded(20.0))  # paused: redrawn at the same length
    view.grow_audio(recorded(25.0))
    view.grow_audio(recorded(40.0))  # past the step: still where the user put it
    assert view.visible_range() == pytest.approx((2.0, 5.0), abs=1e-6)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_0)
    assert view.visible_range() == pytest.approx((0.0, 60.0), abs=1e-6)
    view.grow_audio(recorded(70.0))
    assert view.visible_range() == pytest.approx((0.0, 120.0), abs=1e-6)


def test_the_finished_recording_is_shown_whole_and_a_new_one_starts_small(qtbot):
    view = shown_waveform(qtbot)
    view.grow_audio(recorded(70.0))
    view.set_audio(recorded(71.0))  # the file, decoded after Stop
    assert view.visible_range() == pytest.approx((0.0, 71.0), abs=1e-6)
    view.grow_audio(recorded(3.0))  # the next recording
    assert view.visible_range() == pytest.approx((0.0, 30.0), abs=1e-6)


def test_a_growing_recording_cannot_be_panned_or_zoomed_out_past_its_width(qtbot):
    # catches: the view's limits left out while recording (panning before the start or past the
    # step, zooming out beyond it, or in past the deepest zoom)
    view = shown_waveform(qtbot)
    view.grow_audio(recorded(10.0))
    view.vb.setXRange(-20.0, 80.0, padding=0.0)
    assert view.visible_range() == pytest.approx((0.0, 30.0), abs=1e-6)
    view.vb.setXRange(-10.0, 5.0, padding=0.0)
    assert view.visible_range() == pytest.approx((0.0, 15.0), abs=1e-6)
    view.vb.setXRange(5.0, 5.001, padding=0.0)
    x0, x1 = view.visible_range()
    assert x1 - x0 == pytest.approx(MIN_SPAN, rel=1e-3)
