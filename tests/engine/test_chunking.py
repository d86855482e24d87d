"""Chunking: bounded chunks, every bit of speech covered once, cuts in silence, long runs split quietly."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.audio.chunking import ChunkingConfig, energy_quietest, plan_chunks, split_long_run
from engine.types import Recording, SpeechSegment


@st.composite
def speech_layouts(draw: st.DrawFn) -> tuple[list[SpeechSegment], float]:
    """Ordered, non-overlapping speech segments with gaps, plus the recording duration."""
    t = draw(st.floats(0, 5))
    segments = []
    for _ in range(draw(st.integers(0, 40))):
        length = draw(st.floats(0.25, 90))
        segments.append(SpeechSegment(t, t + length))
        t += length + draw(st.floats(0.5, 20))
    return segments, t + draw(st.floats(0, 5))


def _inside(seg: SpeechSegment, chunk_start: float, chunk_end: float) -> bool:
    return chunk_start - 1e-9 <= seg.start and seg.end <= chunk_end + 1e-9


@settings(max_examples=200, deadline=None)
@given(layout=speech_layouts(), max_seconds=st.sampled_from([30.0, 60.0, 300.0]))
def test_chunks_are_bounded_ordered_and_cover_all_speech_once(layout, max_seconds):
    speech, duration = layout
    chunks = plan_chunks(speech, ChunkingConfig(max_seconds=max_seconds), duration)

    assert all(c.duration <= max_seconds + 1e-6 for c in chunks)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert all(a.end <= b.start + 1e-9 for a, b in pairwise(chunks))
    assert all(c.start >= 0 and c.end <= max(duration, speech[-1].end if speech else 0) for c in chunks)

    # every speech instant is inside exactly one chunk; total covered speech is preserved
    covered = sum(p.duration for c in chunks for p in c.speech)
    assert covered == pytest.approx(sum(s.duration for s in speech), abs=1e-6)
    for c in chunks:
        assert all(_inside(p, c.start, c.end) for p in c.speech)


@settings(max_examples=200, deadline=None)
@given(layout=speech_layouts())
def test_chunk_boundaries_fall_in_silence_unless_a_run_is_too_long(layout):
    speech, duration = layout
    max_seconds = 60.0
    chunks = plan_chunks(speech, ChunkingConfig(max_seconds=max_seconds), duration)
    for boundary in [c.start for c in chunks] + [c.end for c in chunks]:
        for s in speech:
            if s.start + 1e-9 < boundary < s.end - 1e-9:  # a cut inside speech …
                assert s.duration > max_seconds - 0.4  # … only in a run that cannot fit


def test_short_segments_merge_greedily_and_silence_between_chunks_is_skipped():
    speech = [SpeechSegment(1, 10), SpeechSegment(12, 25), SpeechSegment(27, 40), SpeechSegment(100, 110)]
    chunks = plan_chunks(speech, ChunkingConfig(max_seconds=30, pad_seconds=0.2), duration=120)
    spans = [(round(c.start, 2), round(c.end, 2)) for c in chunks]
    assert spans == [(0.8, 25.2), (26.8, 40.2), (99.8, 110.2)]
    assert [len(c.speech) for c in chunks] == [2, 1, 1]


def test_a_long_speech_run_is_split_at_its_quietest_point():
    sr = 16000
    rng = np.random.default_rng(0)
    samples = (0.3 * rng.standard_normal(100 * sr)).astype(np.float32)
    samples[int(41.0 * sr) : int(41.3 * sr)] *= 0.01  # a short pause inside continuous speech
    recording = Recording(samples, sr)
    pieces = split_long_run(SpeechSegment(0, 100), 60.0, energy_quietest(recording))
    assert 41.0 <= pieces[0].end <= 41.3
    assert all(p.duration <= 60.0 for p in pieces)
    assert pieces[0].start == 0 and pieces[-1].end == 100


def test_no_speech_gives_no_chunks():
    assert plan_chunks([], ChunkingConfig(max_seconds=30), duration=60) == []


@pytest.mark.parametrize("bad", [dict(max_seconds=0.5), dict(max_seconds=30, pad_seconds=10)])
def test_invalid_chunking_settings_are_rejected(bad):
    with pytest.raises(ValueError):
        ChunkingConfig(**bad)


def test_short_pauses_fill_a_window_without_splitting_anything_else():
    speech = [SpeechSegment(1, 10), SpeechSegment(12, 40), SpeechSegment(42, 50)]
    config = ChunkingConfig(max_seconds=30, pad_seconds=0.2)
    plain = plan_chunks(speech, config, duration=60)
    filled = plan_chunks(speech, config, duration=60, pauses=[20.0, 24.5, 28.5, 45.0])
    assert len(plain) == 3 and len(filled) == 2
    # the run that did not fit is cut at the latest pause that fills the first window to ≤ 25 s
    assert [(p.start, p.end) for p in filled[0].speech] == [(1, 10), (12, 24.5)]
    assert [(p.start, p.end) for p in filled[1].speech] == [(24.5, 40), (42, 50)]
    assert filled[0].end == filled[1].start == 24.5  # cut at the pause itself, no padding across it
    assert all(c.duration <= 30 + 1e-9 for c in filled)


def test_a_pause_too_close_to_either_end_of_a_run_is_not_used():
    speech = [SpeechSegment(1, 20), SpeechSegment(22, 40)]
    config = ChunkingConfig(max_seconds=30, pad_seconds=0.2)
    chunks = plan_chunks(speech, config, duration=60, pauses=[22.5])
    assert [len(c.speech) for c in chunks] == [1, 1]


@settings(max_examples=200, deadline=None)
@given(layout=speech_layouts(), data=st.data())
def test_chunks_cut_at_pauses_still_cover_all_speech_once_and_stay_bounded(layout, data):
    speech, duration = layout
    pauses = sorted(data.draw(st.lists(st.floats(0, max(duration, 1)), max_size=60)))
    chunks = plan_chunks(speech, ChunkingConfig(max_seconds=30), duration, pauses=pauses)
    assert all(c.duration <= 30 + 1e-6 for c in chunks)
    assert all(a.end <= b.start + 1e-9 for a, b in pairwise(chunks))
    covered = sum(p.duration for c in chunks for p in c.speech)
    assert covered == pytest.approx(sum(s.duration for s in speech), abs=1e-6)
    for c in chunks:
        assert all(_inside(p, c.start, c.end) for p in c.speech)
        assert all(p.duration >= 0 for p in c.speech)


def _loud_with_quiet(
    spans: list[tuple[float, float]], seconds: float = 20.0, rate: int = 16_000
) -> Recording:
    samples = np.random.default_rng(3).normal(0, 0.3, int(seconds * rate)).astype(np.float32)
    for a, b in spans:
        samples[round(a * rate) : round(b * rate)] = 0.0
    return Recording(samples, rate)


def test_the_quietest_point_is_the_middle_of_the_real_silence_not_a_lone_click():
    recording = _loud_with_quiet([(11.0, 11.05), (13.0, 13.15)])  # a one-frame dip, then 150 ms of silence
    assert energy_quietest(recording)(10.0, 15.0) == pytest.approx(13.075, abs=0.001)


def test_a_range_shorter_than_a_frame_gives_its_middle():
    assert energy_quietest(_loud_with_quiet([]))(5.0, 5.01) == pytest.approx(5.005)
