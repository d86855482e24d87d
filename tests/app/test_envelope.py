"""The envelope pyramid: exact min/max at every level, bounded work at any zoom."""

from __future__ import annotations

import numpy as np
import pytest

from app.envelope import EnvelopePyramid


@pytest.fixture
def pyramid() -> EnvelopePyramid:
    rng = np.random.default_rng(1)
    samples = (rng.standard_normal(16000 * 600) * 0.1).astype(np.float32)  # 10 minutes
    samples[16000 * 300] = 0.99  # one click in the middle
    return EnvelopePyramid.build(samples, 16000)


def test_every_level_holds_the_true_extremes_of_its_blocks(pyramid):
    x = pyramid.samples
    for level in pyramid.levels:
        whole = len(x) // level.block * level.block
        expected = x[:whole].reshape(-1, level.block)
        np.testing.assert_array_equal(level.maxs[: len(expected)], expected.max(axis=1))
        np.testing.assert_array_equal(level.mins[: len(expected)], expected.min(axis=1))


def test_a_short_click_survives_the_whole_recording_view(pyramid):
    env = pyramid.window(0, pyramid.duration, 1000)
    assert env.maxs.max() == pytest.approx(0.99)


@pytest.mark.parametrize("span", [600.0, 60.0, 5.0, 0.5, 0.15])
def test_any_zoom_returns_between_one_and_four_bins_per_requested_bin(pyramid, span):
    t0 = 0.0 if span == 600.0 else 100.0
    env = pyramid.window(t0, t0 + span, 800)
    assert not env.raw
    assert 800 <= len(env.times) <= 4 * 800 + 2
    assert env.times[0] <= t0 and env.times[-1] >= t0 + span - 2 * env.step


def test_deep_zoom_shows_the_samples_themselves(pyramid):
    env = pyramid.window(10.0, 10.01, 1000)
    assert env.raw
    np.testing.assert_array_equal(env.mins, pyramid.samples[160000:160160])


def test_a_window_past_the_end_is_empty_not_an_error(pyramid):
    env = pyramid.window(700.0, 800.0, 500)
    assert len(env.times) == 0


def test_odd_lengths_keep_the_tail():
    samples = np.zeros(1000, np.float32)
    samples[-1] = -0.7
    pyramid = EnvelopePyramid.build(samples, 100, base_block=64, min_bins=2)
    assert pyramid.levels[0].mins[-1] == pytest.approx(-0.7)
    assert pyramid.levels[-1].mins.min() == pytest.approx(-0.7)


def test_stereo_input_is_refused():
    with pytest.raises(ValueError, match="1-D"):
        EnvelopePyramid.build(np.zeros((10, 2), np.float32), 16000)


@pytest.mark.parametrize("base_block,factor,min_bins", [(64, 4, 256), (4, 2, 16), (1, 3, 1)])
def test_a_pyramid_extended_as_a_recording_grows_equals_one_built_whole(base_block, factor, min_bins):
    rng = np.random.default_rng(base_block)
    signal = rng.standard_normal(50_000).astype(np.float32)
    grown = EnvelopePyramid.build(signal[:1], 2000, base_block, factor, min_bins)
    for end in (1, 63, 64, 65, 4097, 4097, 20_000, 50_000):  # partial blocks, whole ones, no growth
        grown = grown.extended(signal[:end])
        whole = EnvelopePyramid.build(signal[:end], 2000, base_block, factor, min_bins)
        assert [lv.block for lv in grown.levels] == [lv.block for lv in whole.levels]
        for mine, theirs in zip(grown.levels, whole.levels, strict=True):
            assert np.array_equal(mine.mins, theirs.mins) and np.array_equal(mine.maxs, theirs.maxs)
        assert grown.duration == end / 2000


def test_a_pyramid_is_not_extended_by_a_shorter_signal():
    pyramid = EnvelopePyramid.build(np.zeros(1000, np.float32), 2000)
    with pytest.raises(ValueError) as raised:
        pyramid.extended(np.zeros(999, np.float32))
    assert str(raised.value) == "extended() takes this pyramid's samples followed by new ones"


def test_extending_a_long_recording_reduces_only_what_was_added(monkeypatch):
    import app.envelope as envelope

    hour = np.random.default_rng(3).standard_normal(2000 * 3600).astype(np.float32)
    pyramid = EnvelopePyramid.build(hour[:-100], 2000)
    reduced: list[int] = []
    real = envelope._reduce
    monkeypatch.setattr(
        envelope, "_reduce", lambda low, high, block: reduced.append(len(low)) or real(low, high, block)
    )
    grown = pyramid.extended(hour)
    assert sum(reduced) < 2_000, f"an extension by 100 samples went over {sum(reduced)} values"
    monkeypatch.undo()
    assert np.array_equal(grown.levels[0].maxs, EnvelopePyramid.build(hour, 2000).levels[0].maxs)


def _bins_hold_their_samples_extremes(pyramid: EnvelopePyramid, t0: float, t1: float, max_bins: int) -> str:
    """Which zoom answered (`raw`, `reduced`, `level`), after checking that each bin drawn holds the
    minimum and maximum of exactly the samples from its start time to the next bin's (the last
    bin: to there or to the window's end)."""
    env, x, rate = pyramid.window(t0, t1, max_bins), pyramid.samples, pyramid.sample_rate
    width, end = round(env.step * rate), int(np.ceil(t1 * rate))
    for i, start in enumerate(np.rint(env.times * rate).astype(int)):
        stops = {start + width} if i < len(env.times) - 1 else {start + width, end}
        extremes = {(x[start:stop].min(), x[start:stop].max()) for stop in stops}
        assert (env.mins[i], env.maxs[i]) in extremes, (t0, t1, i)
    assert np.allclose(np.diff(env.times), env.step) and env.mins.dtype == env.maxs.dtype == np.float32
    fine = width < pyramid.levels[0].block
    return "raw" if env.raw else "reduced" if fine else "level"


def test_each_bin_at_every_zoom_holds_the_extremes_of_the_samples_it_covers():
    signal = np.random.default_rng(7).standard_normal(1000 * 120).astype(np.float32)  # 2 min at 1 kHz
    pyramid = EnvelopePyramid.build(signal, 1000, base_block=8, factor=4, min_bins=16)
    windows = [(0.0, 120.0), (3.3, 90.7), (10.0, 10.3), (10.003, 10.05), (61.0, 62.0)]
    zooms = {_bins_hold_their_samples_extremes(pyramid, t0, t1, 50) for t0, t1 in windows}
    assert zooms == {"raw", "reduced", "level"}


def test_a_window_of_two_samples_per_bin_is_drawn_as_samples_and_one_more_as_bins():
    pyramid = EnvelopePyramid.build(np.arange(10_000, dtype=np.float32), 1000)
    at_edge, past_it = pyramid.window(1.0, 1.2, 100), pyramid.window(1.0, 1.201, 100)
    assert at_edge.raw and len(at_edge.times) == 200 and at_edge.mins[0] == 1000.0
    assert not past_it.raw and len(past_it.times) <= 101


def test_a_window_starting_before_zero_starts_at_the_first_sample():
    pyramid = EnvelopePyramid.build(np.arange(10_000, dtype=np.float32), 1000)
    env = pyramid.window(-5.0, 0.05, 100)
    assert env.raw and env.times[0] == 0.0 and env.mins[0] == 0.0 and len(env.times) == 50


def test_a_window_of_exactly_max_bins_bins_of_a_level_is_drawn_from_that_level():
    pyramid = EnvelopePyramid.build(np.zeros(64 * 4**3 * 10, np.float32), 16000)
    for level in pyramid.levels:
        env = pyramid.window(0.0, 100 * level.block / 16000, 100)
        assert env.step == level.block / 16000 and len(env.times) == 100


def test_levels_are_added_only_while_the_coarsest_has_more_than_min_bins():
    assert len(EnvelopePyramid.build(np.zeros(64 * 256, np.float32), 16000).levels) == 1
    assert len(EnvelopePyramid.build(np.zeros(64 * 257, np.float32), 16000).levels) == 2


def test_an_hour_of_audio_keeps_a_pyramid_of_float32_within_its_stated_memory():
    hour = np.zeros(16000 * 3600, np.float32)
    pyramid = EnvelopePyramid.build(hour, 16000)
    held = sum(level.mins.nbytes + level.maxs.nbytes for level in pyramid.levels)
    assert held <= 2 * 4 / 64 * 4 / 3 * len(hour)  # the docstring's bound: ≈ 7.2 MB for this hour
    assert {level.mins.dtype for level in pyramid.levels} == {np.dtype(np.float32)}


@pytest.mark.parametrize(("rate", "block", "factor"), [(0, 64, 4), (16000, 0, 4), (16000, 64, 1)])
def test_a_pyramid_without_a_rate_a_block_or_a_factor_of_two_is_refused(rate, block, factor):
    with pytest.raises(ValueError) as raised:
        EnvelopePyramid.build(np.zeros(100, np.float32), rate, block, factor)
    assert str(raised.value) == "sample rate and block must be positive and the factor at least 2"


def test_the_smallest_block_factor_and_bin_count_are_taken():
    pyramid = EnvelopePyramid.build(np.arange(8, dtype=np.float32), 1, base_block=1, factor=2, min_bins=1)
    assert [level.maxs.tolist() for level in pyramid.levels] == [list(range(8)), [1, 3, 5, 7], [3, 7], [7]]
    assert len(pyramid.window(0.0, 8.0, 1).times) >= 1
    with pytest.raises(ValueError) as raised:
        pyramid.window(0.0, 8.0, 0)
    assert str(raised.value) == "max_bins must be at least 1"
