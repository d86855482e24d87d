"""The streaming VAD closes the same speech segments as the offline VAD, as the audio arrives."""

from __future__ import annotations

import numpy as np
import pytest

from engine.audio.io import load_audio
from engine.audio.vad import FRAME, SileroVad, VadConfig
from engine.live.vad_stream import StreamingVad
from tests.engine.live.conftest import DEMO


@pytest.fixture(scope="module")
def demo_16k() -> np.ndarray:
    return load_audio(DEMO, 16000).samples[: 16000 * 60]


def stream(samples: np.ndarray, vad: StreamingVad, block: int = 1600) -> list[tuple[float, float, float]]:
    """(start, end, seconds pushed when it closed) of each segment."""
    out = []
    for a in range(0, len(samples), block):
        out += [(s.start, s.end, vad.seconds) for s in vad.push(samples[a : a + block])]
    out += [(s.start, s.end, vad.seconds) for s in vad.flush()]
    return out


def test_streamed_segments_equal_the_offline_ones(demo_16k: np.ndarray) -> None:
    from engine.types import Recording

    offline = SileroVad().detect(Recording(demo_16k, 16000))
    live = stream(demo_16k, StreamingVad(max_seconds=1000))
    assert len(live) == len(offline)
    for (start, end, _), ref in zip(live, offline, strict=True):
        assert start == pytest.approx(ref.start, abs=0.04) and end == pytest.approx(ref.end, abs=0.04)


def test_a_segment_closes_soon_after_its_speech_ends(demo_16k: np.ndarray) -> None:
    live = stream(demo_16k, StreamingVad(max_seconds=1000))
    for _, end, closed_at in live[:-1]:
        assert closed_at - end < 0.7  # min_silence 0.5 s, one block of 0.1 s, minus the pad


def test_long_speech_is_cut_into_pieces_no_longer_than_the_limit(demo_16k: np.ndarray) -> None:
    live = stream(demo_16k, StreamingVad(max_seconds=8))
    assert max(end - start for start, end, _ in live) <= 8.05
    starts = [s for s, _, _ in live]
    ends = [e for _, e, _ in live]
    assert all(b >= a for a, b in zip(ends, starts[1:], strict=False))  # no overlap, nothing twice


def test_a_turn_running_into_the_next_gets_its_own_segment_soon_after_it_ends(demo_16k: np.ndarray) -> None:
    from engine.live.session import LiveConfig

    turn_end = 43.50  # the next speaker starts at 43.77: too short a silence to close a segment
    merged = stream(demo_16k, StreamingVad(LiveConfig().vad, cut_after=None))
    cut = stream(demo_16k, StreamingVad(LiveConfig().vad, cut_after=3.0))
    ((_, end, closed_at),) = [s for s in merged if s[0] <= turn_end <= s[1]]
    assert end > 50 and closed_at > 50  # one segment for both turns, shown when the second ends
    ((_, end, closed_at),) = [s for s in cut if s[0] <= turn_end <= s[1] + 0.3]
    assert end == pytest.approx(turn_end, abs=0.3) and closed_at < 45.0
    assert len(cut) > len(merged)


# The cut rule on scripted speech probabilities (one 32 ms frame each): what silero would say, exactly.
SPEECH, SILENCE = 0.9, 0.05
S = FRAME / 16000  # seconds per frame
PAD = 0.03  # VadConfig().speech_pad_ms


class Scripted:
    """A detector that reads its speech probabilities from a list instead of the model."""

    def __init__(self, probs: list[float]) -> None:
        self.probs, self.at = probs, 0

    def _load(self) -> Scripted:
        return self

    def run(self, names, feeds):  # onnxruntime's InferenceSession.run
        n = len(feeds["input"])
        out = np.array(self.probs[self.at : self.at + n], np.float32)
        self.at += n
        return out, feeds["h"], feeds["c"]


def script(*runs: tuple[float, int]) -> list[float]:
    return [p for p, n in runs for _ in range(n)]


def scripted(probs: list[float], cut_after: float | None = 3.0) -> StreamingVad:
    return StreamingVad(VadConfig(min_silence_ms=300), max_seconds=15, cut_after=cut_after,
                        detector=Scripted(probs))  # fmt: skip


def frames(vad: StreamingVad, n: int, may_cut: bool = True) -> list[tuple[float, float]]:
    return [(s.start, s.end) for s in vad.push(np.zeros(n * FRAME, np.float32), may_cut)]


def test_a_long_segment_is_cut_at_its_longest_pause_and_goes_on_from_the_pause_end() -> None:
    probs = script((SPEECH, 20), (SILENCE, 6), (SPEECH, 20), (SILENCE, 8), (SPEECH, 20), (SILENCE, 6),
                   (SPEECH, 60), (SILENCE, 20))  # fmt: skip
    vad = scripted(probs)
    out = frames(vad, len(probs))
    assert out[0] == pytest.approx((0.0, 46 * S + PAD))  # the 8-frame pause, not the 6-frame ones
    assert out[1] == pytest.approx((54 * S - PAD, 140 * S + PAD))  # the rest, closed by its silence
    assert len(out) == 2


def test_of_two_pauses_as_long_the_later_one_is_cut() -> None:
    probs = script((SPEECH, 20), (SILENCE, 6), (SPEECH, 20), (SILENCE, 6), (SPEECH, 60), (SILENCE, 20))
    out = frames(scripted(probs), len(probs))
    assert out[0] == pytest.approx((0.0, 46 * S + PAD))


def test_a_segment_is_cut_once_it_is_longer_than_the_bound_not_before() -> None:
    probs = script((SPEECH, 20), (SILENCE, 6), (SPEECH, 80))
    vad = scripted(probs)  # 3 s: 93 frames
    assert frames(vad, 93) == []  # 93 frames, 2.976 s: not longer than 3 s
    assert frames(vad, 1) == [pytest.approx((0.0, 20 * S + PAD))]


def test_a_silence_shorter_than_a_pause_is_no_place_to_cut() -> None:
    vad = scripted(script((SPEECH, 20), (SILENCE, 4), (SPEECH, 80), (SILENCE, 20)))  # 4 frames: 128 ms
    assert frames(vad, 124) == [pytest.approx((0.0, 104 * S + PAD))]  # closed by its silence only
    vad = scripted(script((SPEECH, 20), (SILENCE, 5), (SPEECH, 80), (SILENCE, 20)))  # 5 frames: 160 ms
    assert frames(vad, 125)[0] == pytest.approx((0.0, 20 * S + PAD))


def test_a_pause_before_the_cut_is_not_cut_at_again() -> None:
    probs = script((SPEECH, 20), (SILENCE, 8), (SPEECH, 40), (SILENCE, 6), (SPEECH, 80), (SILENCE, 20))
    out = frames(scripted(probs), len(probs))
    assert out[:2] == [pytest.approx((0.0, 20 * S + PAD)), pytest.approx((28 * S - PAD, 68 * S + PAD))]
    assert all(a < b for a, b in out)


def test_no_cut_while_the_caller_says_not_now_then_at_once() -> None:
    probs = script((SPEECH, 20), (SILENCE, 6), (SPEECH, 200))
    vad = scripted(probs)
    assert frames(vad, 150, may_cut=False) == []
    assert frames(vad, 1) == [pytest.approx((0.0, 20 * S + PAD))]


def test_without_a_bound_only_silence_and_the_longest_length_end_a_segment() -> None:
    probs = script((SPEECH, 20), (SILENCE, 6), (SPEECH, 100), (SILENCE, 20))
    assert frames(scripted(probs, cut_after=None), len(probs)) == [pytest.approx((0.0, 126 * S + PAD))]


def test_a_segment_cut_at_the_longest_length_forgets_its_pauses() -> None:
    probs = script((SPEECH, 20), (SILENCE, 6), (SPEECH, 500))
    vad = StreamingVad(VadConfig(min_silence_ms=300), max_seconds=4, cut_after=3.0, detector=Scripted(probs))
    out = frames(vad, 93, may_cut=False)  # the pause is passed over
    out += frames(vad, 40, may_cut=False)  # 4 s: cut at the quietest late frame
    assert len(out) == 1 and out[0][1] > 26 * S  # past the pause
    assert frames(vad, 70) == []  # 3 s on, no pause to cut at: the one at 0.64 s is in the closed piece


@pytest.mark.parametrize("cut_after", [0.0, -1.0, 15.0, 20.0])
def test_a_cut_bound_outside_the_longest_length_is_refused(cut_after: float) -> None:
    with pytest.raises(ValueError, match="cut at a pause"):
        StreamingVad(max_seconds=15, cut_after=cut_after)


@pytest.mark.parametrize("cut_after", [0.0, 15.0])
def test_the_live_config_refuses_a_cut_bound_outside_the_longest_length(cut_after: float) -> None:
    from engine.live.session import LiveConfig

    with pytest.raises(ValueError, match="cut at a pause"):
        LiveConfig(max_segment_seconds=15.0, cut_after_seconds=cut_after)
    assert LiveConfig(cut_after_seconds=None).cut_after_seconds is None  # cuts at silences only


def test_a_segment_at_the_longest_length_is_cut_unpadded_at_its_quietest_frame_of_the_last_third() -> None:
    dips = {100: 0.6, 195: 0.6}  # still speech (≥ 0.5), the quietest frames: at 2/3+ of each piece
    probs = [SILENCE] * 10 + [dips.get(i, SPEECH) for i in range(10, 300)]
    vad = StreamingVad(VadConfig(min_silence_ms=300), max_seconds=4, cut_after=None, detector=Scripted(probs))
    out = frames(vad, 250)  # 4 s: 125 frames a piece
    assert out == [pytest.approx((10 * S - PAD, 100 * S)), pytest.approx((100 * S, 195 * S))]


def test_after_a_cut_at_a_pause_the_longest_length_counts_from_the_pause_end() -> None:
    dip = [0.6 if i == 140 else SPEECH for i in range(36, 240)]  # the quietest frame of the rest
    probs = script((SILENCE, 10), (SPEECH, 20), (SILENCE, 6)) + dip
    vad = StreamingVad(VadConfig(min_silence_ms=300), max_seconds=4, cut_after=3.0, detector=Scripted(probs))
    out = frames(vad, 170, may_cut=True)
    assert out == [pytest.approx((10 * S - PAD, 30 * S + PAD)), pytest.approx((36 * S - PAD, 140 * S))]


def test_the_stream_end_scores_the_last_partial_frame() -> None:
    vad = scripted(script((SPEECH, 20), (SILENCE, 11)))
    assert frames(vad, 30) == []  # the closing silence is one frame short
    assert vad.push(np.zeros(100, np.float32)) == []  # part of the next frame: not scored yet
    assert [(s.start, s.end) for s in vad.flush()] == [pytest.approx((0.0, 20 * S + PAD))]


def test_the_longest_length_cut_comes_on_the_frame_that_reaches_it() -> None:
    vad = StreamingVad(VadConfig(min_silence_ms=300), max_seconds=4, detector=Scripted([SPEECH] * 200))
    assert frames(vad, 124) == []  # 4 s: 125 frames
    assert len(frames(vad, 1)) == 1


def test_a_frame_at_the_threshold_is_speech() -> None:
    vad = scripted(script((0.5, 20), (SILENCE, 20)))
    assert frames(vad, 40) == [pytest.approx((0.0, 20 * S + PAD))]


def test_a_silence_of_exactly_min_silence_closes_the_segment() -> None:
    probs = script((SPEECH, 20), (SILENCE, 11), (SPEECH, 20), (SILENCE, 20))  # 320 ms: 10 frames
    vad = StreamingVad(VadConfig(min_silence_ms=320), max_seconds=15, detector=Scripted(probs))
    assert len(frames(vad, len(probs))) == 2  # the 11th silent frame is 10 frames past the first


@pytest.mark.parametrize("speech, kept", [(10, False), (11, True)])
def test_speech_of_min_speech_or_less_is_dropped(speech: int, kept: bool) -> None:
    probs = script((SILENCE, 20), (SPEECH, speech), (SILENCE, 20))  # 320 ms: 10 frames
    vad = StreamingVad(VadConfig(min_speech_ms=320), max_seconds=15, detector=Scripted(probs))
    assert len(frames(vad, len(probs))) == kept


@pytest.mark.parametrize("speech, kept", [(10, False), (11, True)])
def test_at_the_stream_end_speech_of_min_speech_or_less_is_dropped(speech: int, kept: bool) -> None:
    vad = StreamingVad(VadConfig(min_speech_ms=320), max_seconds=15,
                       detector=Scripted(script((SILENCE, 20), (SPEECH, speech))))  # fmt: skip
    assert frames(vad, 20 + speech) == []
    assert len(vad.flush()) == kept


def test_the_stream_end_scores_one_padded_frame() -> None:
    vad = scripted(script((SPEECH, 20), (SILENCE, 13)))
    frames(vad, 30)
    vad.push(np.zeros(300, np.float32))
    assert len(vad.flush()) == 1 and vad.seconds == pytest.approx(31 * S)


@pytest.mark.parametrize("max_seconds, cut_after", [(1.5, None), (15.0, 0.5)])
def test_short_bounds_above_the_limits_are_accepted(max_seconds: float, cut_after: float | None) -> None:
    vad = StreamingVad(max_seconds=max_seconds, cut_after=cut_after, detector=Scripted([]))
    assert vad.max_frames == int(max_seconds / S)


def test_a_longest_length_of_one_second_is_refused() -> None:
    with pytest.raises(ValueError, match=r"must exceed 1 s, got 1\.0"):
        StreamingVad(max_seconds=1.0)
