"""`engine.types.Recording`: what it refuses, where a time falls in its samples, and that it says
which stream and channel of its file it holds."""

from __future__ import annotations

import numpy as np
import pytest

from engine.types import Recording


def test_stereo_samples_or_a_rate_below_one_hertz_are_refused_with_what_was_given():
    # catches: a refusal without its reason, or a bound moved by one (0 Hz taken, 1 Hz refused)
    with pytest.raises(ValueError) as two_d:
        Recording(np.zeros((2, 3), np.float32), 16000)
    assert str(two_d.value) == "Recording samples must be 1-D (mono), got shape (2, 3)"
    for rate in (0, -8000):
        with pytest.raises(ValueError) as refused:
            Recording(np.zeros(3, np.float32), rate)
        assert str(refused.value) == f"sample rate must be positive, got {rate}"
    assert Recording(np.zeros(3, np.float32), 1).duration == 3.0


def test_a_time_falls_on_its_sample_and_times_outside_the_recording_on_its_ends():
    # catches: the clamp at the start moved off the first sample
    recording = Recording(np.arange(10, dtype=np.float32), 10)
    assert [recording.index(t) for t in (-1.0, 0.0, 0.04, 0.06, 0.5, 5.0)] == [0, 0, 0, 1, 5, 10]
    np.testing.assert_array_equal(recording.slice(0.0, 0.3), [0, 1, 2])


def test_a_recording_holds_its_files_default_stream_and_mix_unless_it_says_otherwise():
    mixed = Recording(np.zeros(3, np.float32), 16000)
    assert (mixed.stream, mixed.channel) == (None, None)
    side = Recording(np.zeros(3, np.float32), 16000, stream=1, channel=0)
    assert (side.stream, side.channel) == (1, 0)
