"""Clock strings, parsing, hit-testing and span culling used by the waveform and the table."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from app.timeline import (
    CLOCK_STEPS,
    LABEL_PIXELS,
    format_axis,
    format_time,
    nearest_utterance,
    parse_time,
    place_labels,
    time_ticks,
    utterance_at,
    visible_spans,
)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0:00.0"), (62.46, "1:02.5"), (3723.4, "1:02:03.4"), (59.96, "1:00.0")],
)
def test_times_read_as_clock_strings(seconds, text):
    assert format_time(seconds) == text


def test_axis_labels_get_decimals_only_when_ticks_are_close():
    assert format_axis(3600, 600) == "1:00:00"
    assert format_axis(10.2, 0.2) == "0:10.2"
    assert format_axis(10.25, 0.05) == "0:10.25"


@pytest.mark.parametrize(("text", "seconds"), [("1:02:03.4", 3723.4), ("2:03.5", 123.5), ("83.25", 83.25)])
def test_typed_times_are_parsed(text, seconds):
    assert parse_time(text) == pytest.approx(seconds)
    assert parse_time(format_time(seconds, 2)) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "abc", "1:75", "-3", "1::2", "1:2:3:4"])
def test_nonsense_times_are_refused(text):
    with pytest.raises(ValueError):
        parse_time(text)


def test_hit_testing_finds_the_utterance_under_a_time():
    starts, ends = [0.0, 5.0, 9.0], [4.0, 8.0, 12.0]
    assert utterance_at(starts, ends, 6.0) == 1
    assert utterance_at(starts, ends, 4.5) is None
    assert nearest_utterance(starts, ends, 4.5) == 0
    assert nearest_utterance(starts, ends, 8.7) == 2
    assert nearest_utterance([], [], 1.0) is None


def test_overlapping_utterances_are_found():
    assert utterance_at([0.0, 1.0], [10.0, 2.0], 5.0) == 0


def test_span_culling_keeps_visible_spans_and_merges_subpixel_gaps():
    starts = np.arange(0, 10_000, 2.0)
    ends = starts + 1.0
    s, e = visible_spans(starts, ends, 100.0, 200.0, min_width=0.0)
    assert s[0] <= 100.0 <= e[-1] + 2 and len(s) == 51
    s, e = visible_spans(starts, ends, 0.0, 10_000.0, min_width=5.0)
    assert len(s) == 1 and e[0] >= 9999.0


def test_chunk_labels_that_do_not_fit_are_left_out_and_never_touch():
    bars = [(0.0, 10.0), (10.0, 10.5), (10.5, 30.0), (30.0, 31.0), (31.0, 90.0)]
    spp = 0.1  # seconds per pixel: the bars are 100, 5, 195, 10 and 590 pixels wide
    placed = place_labels(bars, 0.0, spp, [50.0] * len(bars))
    assert [i for i, _ in placed] == [0, 2, 4]
    for (i, x), (j, y) in itertools.pairwise(placed):
        assert (y - x) / spp >= 50.0 + 6.0, (i, j)
    # scrolled to mid-bar: the label moves to the visible part of its bar
    assert place_labels([(0.0, 60.0)], 20.0, spp, [50.0]) == [(0, 20.0)]


@pytest.mark.parametrize("span", [0.5, 3.0, 20.0, 90.0, 600.0, 3600.0, 10_800.0, 36_000.0])
@pytest.mark.parametrize("pixels", [400.0, 1200.0])
def test_axis_ticks_step_in_clock_units_and_leave_room_for_each_label(span, pixels):
    major, *minor = time_ticks(span, pixels)
    step = major[0]
    assert step in CLOCK_STEPS
    assert span / step <= max(pixels / LABEL_PIXELS, 2.0), "labels would overlap"
    smaller = [s for s in CLOCK_STEPS if s < step]
    assert not smaller or span / smaller[-1] > max(pixels / LABEL_PIXELS, 2.0), "a finer step would fit"
    if minor:
        assert minor[0][0] < step and (step / minor[0][0]) == pytest.approx(round(step / minor[0][0]))


def test_three_hours_across_a_window_step_in_half_hours_not_thousands_of_seconds():
    assert time_ticks(10_800.0, 900.0)[0] == (1800, 0.0)
    assert time_ticks(10_800.0, 900.0)[1] == (900, 0.0)
    assert time_ticks(0.0, 900.0) == []
