"""The streaming VAD closes the same speech segments as the offline VAD, as the audio arrives."""

from __future__ import annotations

import numpy as np
import pytest

from engine.audio.io import load_audio
from engine.audio.vad import SileroVad
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
