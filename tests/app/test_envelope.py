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
    with pytest.raises(ValueError, match="followed by new ones"):
        pyramid.extended(np.zeros(999, np.float32))


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
