"""The waveform signal of a recording in progress: every value kept in order across the buffer's
growth, and a view taken earlier never changes."""

from __future__ import annotations

import numpy as np

from app.recording.display_signal import FIRST_CAPACITY, DisplaySignal


def test_appends_past_the_first_buffer_keep_every_value_in_order_and_earlier_views_unchanged():
    signal, pieces, views = DisplaySignal(), [], []
    rng = np.random.default_rng(7)
    for size in (100, FIRST_CAPACITY - 150, 49, 2, FIRST_CAPACITY * 3, 1):  # fills, then doubles twice
        piece = rng.standard_normal(size).astype(np.float32)
        signal.append(piece)
        pieces.append(piece)
        views.append((signal.view(), np.concatenate(pieces)))
    for view, expected in views:
        assert np.array_equal(view, expected), "a view changed after later appends, or lost values"


def test_clear_starts_a_new_recording_from_nothing():
    signal = DisplaySignal()
    signal.append(np.ones(10, np.float32))
    signal.clear()
    signal.append(np.full(3, 2.0, np.float32))
    assert signal.view().tolist() == [2.0, 2.0, 2.0]


def test_the_signal_stays_float32_and_grows_by_doubling_not_by_each_append():
    signal = DisplaySignal()
    assert signal.view().dtype == np.float32
    signal.append(np.ones(FIRST_CAPACITY + 1, np.float32))
    view = signal.view()
    assert view.dtype == np.float32 and len(view) == FIRST_CAPACITY + 1
    assert view.base is not None and len(view.base) == 2 * FIRST_CAPACITY, (
        "grown by what was added, not doubled"
    )
    signal.clear()
    assert signal.view().dtype == np.float32
