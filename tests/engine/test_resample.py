"""Resampling keeps pitch, level and timing, removes aliasing, and streams identically to one-shot."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.audio.resample import StreamingResampler, output_length, resample

RATE_PAIRS = [(16000, 24000), (44100, 16000), (48000, 16000), (22050, 16000), (44100, 24000), (8000, 16000)]


def tone(freq: float, rate: int, seconds: float = 1.0, amp: float = 0.5) -> np.ndarray:
    t = np.arange(round(rate * seconds)) / rate
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def rms_db(x: np.ndarray) -> float:
    return 20 * np.log10(np.sqrt(np.mean(np.square(x, dtype=np.float64))) + 1e-30)


def interior(x: np.ndarray, rate: int) -> np.ndarray:
    """Drop 50 ms at both ends, where the signal starts and stops abruptly."""
    edge = rate // 20
    return x[edge:-edge]


def peak_hz(x: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return float(np.argmax(spectrum) * rate / len(x))


PASSBAND_CASES = [
    (src, dst, freq)
    for src, dst in RATE_PAIRS
    for freq in (440.0, 3000.0, 6500.0)
    if freq < 0.85 * min(src, dst) / 2  # the band every rate pair keeps intact
]


@pytest.mark.parametrize(("src", "dst", "freq"), PASSBAND_CASES)
def test_tone_keeps_its_pitch_and_level(src: int, dst: int, freq: float) -> None:
    x = tone(freq, src, seconds=2.0)
    y = resample(x, src, dst)
    assert y.dtype == np.float32
    assert len(y) == 2 * dst
    assert peak_hz(interior(y, dst), dst) == pytest.approx(freq, abs=1.0)
    assert rms_db(interior(y, dst)) == pytest.approx(rms_db(interior(x, src)), abs=0.1)


@pytest.mark.parametrize(
    ("src", "dst", "freq"),
    [
        (48000, 16000, 8050.0),
        (44100, 16000, 8300.0),
        (44100, 16000, 12000.0),
        (48000, 16000, 9000.0),
        (48000, 16000, 20000.0),
        (22050, 16000, 10000.0),
        (48000, 24000, 13000.0),
        (44100, 24000, 21000.0),
    ],
)
def test_tone_above_the_new_nyquist_is_removed(src: int, dst: int, freq: float) -> None:
    x = tone(freq, src)
    y = resample(x, src, dst)
    assert rms_db(interior(y, dst)) - rms_db(x) < -60.0


def test_upsampling_adds_no_image_above_the_old_nyquist() -> None:
    y = resample(tone(7000.0, 16000, seconds=2.0), 16000, 24000)
    spectrum = np.abs(np.fft.rfft(interior(y, 24000) * np.hanning(len(y) - 2400)))
    freqs = np.fft.rfftfreq(len(y) - 2400, 1 / 24000)
    above = spectrum[freqs > 8200].max()  # the image of 7 kHz would sit at 9 kHz
    assert 20 * np.log10(above / spectrum.max()) < -60.0


def test_a_click_stays_at_the_same_time() -> None:
    x = np.zeros(48000, dtype=np.float32)
    x[24000] = 1.0  # 0.5 s
    for dst in (16000, 24000):
        y = resample(x, 48000, dst)
        assert int(np.argmax(y)) == dst // 2


def test_output_length_rounds_up_and_equal_rates_copy() -> None:
    assert len(resample(np.zeros(10, np.float32), 48000, 16000)) == output_length(10, 48000, 16000) == 4
    assert len(resample(np.zeros(0, np.float32), 44100, 16000)) == 0
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    y = resample(x, 16000, 16000)
    assert np.array_equal(y, x) and y is not x


@pytest.mark.parametrize("bad", [0, -16000, 16000.5])
def test_invalid_rates_are_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="positive whole number"):
        resample(np.zeros(10, np.float32), 16000, bad)  # type: ignore[arg-type]


def test_stereo_input_is_refused() -> None:
    with pytest.raises(ValueError, match="mono"):
        resample(np.zeros((10, 2), np.float32), 48000, 16000)


@settings(max_examples=40, deadline=None)
@given(
    pair=st.sampled_from([*RATE_PAIRS, (48000, 24000), (24000, 16000)]),
    length=st.integers(0, 120_000),
    cuts=st.lists(st.integers(1, 40_000), max_size=12),
    seed=st.integers(0, 2**32 - 1),
)
def test_streaming_equals_one_shot_for_any_block_sizes(
    pair: tuple[int, int], length: int, cuts: list[int], seed: int
) -> None:
    src, dst = pair
    x = np.random.default_rng(seed).uniform(-1, 1, length).astype(np.float32)
    stream = StreamingResampler(src, dst)
    parts, pos = [], 0
    for size in cuts:
        parts.append(stream.push(x[pos : pos + size]))
        pos += size
    parts.append(stream.push(x[pos:]))
    parts.append(stream.flush())
    assert np.array_equal(np.concatenate(parts), resample(x, src, dst))
    assert stream.samples_in == length and stream.samples_out == output_length(length, src, dst)


def test_stream_cannot_be_fed_after_flush() -> None:
    stream = StreamingResampler(48000, 16000)
    stream.push(np.zeros(100, np.float32))
    stream.flush()
    with pytest.raises(RuntimeError):
        stream.push(np.zeros(100, np.float32))


@pytest.mark.parametrize(("up", "down"), [(160, 441), (1, 3), (2, 1), (147, 160), (1, 6)])
def test_the_filter_is_the_kaiser_design_of_scipy_without_importing_it(up: int, down: int) -> None:
    """A wrong Kaiser beta, an even length or a gain off by `up` would change every resampled sample."""
    from scipy.signal import firwin, kaiserord

    from engine.audio.resample import STOPBAND_DB, TRANSITION, design_filter

    widest = max(up, down)
    numtaps, beta = kaiserord(STOPBAND_DB, TRANSITION / widest)
    expected = firwin(numtaps | 1, (1 - TRANSITION / 2) / widest, window=("kaiser", beta)) * up
    assert np.allclose(design_filter(up, down), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("up", "down"), [(160, 441), (1, 3), (2, 1), (147, 160), (3, 2)])
@pytest.mark.parametrize(("first", "count"), [(0, 1), (0, 997), (37, 500), (480, 1)])
def test_the_polyphase_product_gives_scipys_upfirdn_outputs(
    up: int, down: int, first: int, count: int
) -> None:
    """Each output's phase, its first input and the zeros past the input's end: an off-by-one in any
    of them shifts or drops samples of every recording."""
    from scipy.signal import upfirdn

    from engine.audio.resample import design_filter, phase_taps, polyphase

    h = design_filter(up, down)
    x = np.random.default_rng(up * 1000 + down).uniform(-1, 1, 300)
    expected = np.zeros(first + count)
    full = upfirdn(h, x, up, down)[: first + count]
    expected[: len(full)] = full
    got = polyphase(phase_taps(h, up), x, up, down, first, count)
    assert np.allclose(got, expected[first:], rtol=0, atol=1e-12)


def test_a_live_resampler_resamples_without_importing_scipy_signal() -> None:
    """Its first blocks arrive on the capture thread while the window draws: importing scipy.signal
    there held the interpreter for 75–90 ms, a visible freeze of the window."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np; from engine.audio.resample import StreamingResampler; "
        "s = StreamingResampler(48000, 16000, 1600); n = len(s.push(np.ones(48000, np.float32))); "
        "print(n, 'scipy.signal' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[1] == "False" and int(out.stdout.split()[0]) > 0


@pytest.mark.parametrize("attenuation", [10.0, 21.0, 21.5, 30.0, 50.0, 50.5, 60.0, 80.0])
def test_kaisers_window_parameter_is_his_formula_at_every_attenuation(attenuation: float) -> None:
    """The three branches of Kaiser's formula (a wrong constant or bound changes the filter)."""
    from scipy.signal import kaiser_beta as scipys

    from engine.audio.resample import kaiser_beta

    assert kaiser_beta(attenuation) == pytest.approx(scipys(attenuation), abs=1e-12)


@pytest.mark.parametrize(("src", "dst", "group"), [(48000, 16000, 32768), (44100, 16000, 32768),
                                                   (16000, 24000, 32768), (48000, 16000, 100)])  # fmt: skip
def test_a_tone_resampled_is_the_same_tone_sampled_at_the_new_rate_to_its_last_sample(
    src: int, dst: int, group: int
) -> None:
    """Sample for sample, over several filter windows and to the end of the signal: a filter
    delay off by a sample, context missing at a window's edge, or the end padded with anything but
    zeros puts the output off the tone."""
    seconds, freq = 3.0, 1000.0
    x = np.sin(2 * np.pi * freq * np.arange(round(src * seconds)) / src)
    stream = StreamingResampler(src, dst, group_output=group)
    y = np.concatenate((stream.push(x), stream.flush()))
    expected = np.sin(2 * np.pi * freq * np.arange(len(y)) / dst)
    body = slice(dst // 50, len(y) - dst // 50)  # 20 ms from each end, where the tone starts and stops
    assert np.abs(y[body] - expected[body]).max() < 2e-3
    assert not stream_all(np.zeros(src), src, dst, group).any(), "silence did not stay silent to its end"


def stream_all(x: np.ndarray, src: int, dst: int, group: int) -> np.ndarray:
    stream = StreamingResampler(src, dst, group_output=group)
    return np.concatenate((stream.push(x), stream.flush()))


def test_a_recording_longer_than_one_block_is_resampled_whole() -> None:
    """`resample` feeds its stream 2^20 samples at a time: every block's output lands after the last."""
    x = np.random.default_rng(5).uniform(-1, 1, (1 << 20) + 50_000).astype(np.float32)
    assert np.array_equal(resample(x, 48000, 16000), stream_all(x, 48000, 16000, 1 << 15))


def test_bad_rates_and_samples_are_refused_naming_what_is_wrong() -> None:
    x = np.zeros(10, np.float32)
    with pytest.raises(ValueError, match=r"^from_rate must be a positive whole number of Hz, got 44100\.5$"):
        resample(x, 44100.5, 16000)
    with pytest.raises(ValueError, match=r"^to_rate must be a positive whole number of Hz, got 0$"):
        resample(x, 16000, 0)
    assert output_length(10, 1, 2) == 20  # one hertz is a rate
    with pytest.raises(ValueError, match=r"^expected floating-point samples, got int16$"):
        resample(np.zeros(10, np.int16), 48000, 16000)
    with pytest.raises(ValueError, match=r"^rate ratio 1/1000000 is too unusual to resample$"):
        StreamingResampler(1_000_000, 1)
    with pytest.raises(ValueError, match=r"^outputs per filter run must be at least 1, got 0$"):
        StreamingResampler(48000, 16000, group_output=0)
    assert len(stream_all(np.ones(9), 48000, 16000, 1)) == 3  # one output per run is allowed


def test_equal_rates_pass_samples_through_as_float32_and_flush_nothing() -> None:
    stream = StreamingResampler(16000, 16000)
    given = np.ones(5, np.float32)
    out = stream.push(given)
    given[:] = 0.0  # the capture reuses its buffer: what was handed on must not change with it
    assert np.array_equal(out, np.ones(5)) and stream.push(np.ones(3)) is not None
    rest = stream.flush()
    assert out.dtype == np.float32 and rest.dtype == np.float32 and len(rest) == 0
    assert stream.samples_out == 8
    with pytest.raises(RuntimeError, match=r"^push\(\) after flush\(\): make a new StreamingResampler$"):
        stream.push(np.ones(1))
    empty = StreamingResampler(48000, 16000)
    assert empty.push(np.zeros(0)).dtype == np.float32  # nothing yet: an empty float32 array
    with pytest.raises(RuntimeError, match=r"^flush\(\) called twice$"):
        stream.flush()
