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
    signal, buffers = DisplaySignal(), set()
    assert signal.view().dtype == np.float32
    for _ in range(1000):  # 1,000 appends of a 0.5 s piece: 500,000 values
        signal.append(np.ones(1000, np.float32))
        view = signal.view()
        buffers.add(id(view.base))
    assert view.dtype == np.float32 and len(view) == 1_000_000 // 2 * 2
    assert len(buffers) <= 6, "each growth copies everything: it must double, not grow by what is added"
    signal.clear()
    assert signal.view().dtype == np.float32
