"""The provisional speaker rules with voices given as vectors: when a segment joins a speaker, founds
one, or moves one (the GE2E encoder on the demo's voices is `test_online_speakers.py`).

Each "voice" is a 2-D unit vector, so a similarity is the cosine a reader can check by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.live.online_speakers import OnlineSpeakers

LONG, SHORT = 16000, 15999  # samples: a segment of exactly `min_seconds` (1 s) is long enough


class GivenVoices:
    """An encoder that hears, in each segment, the voice vector the test gives with it."""

    def __init__(self) -> None:
        self.loaded = 0
        self.next: np.ndarray | None = None

    def load(self) -> None:
        self.loaded += 1

    def embed_audio(self, samples: np.ndarray) -> np.ndarray | None:
        return self.next


def voice(degrees: float, length: float = 1.0) -> np.ndarray:
    a = math.radians(degrees)
    return length * np.array([math.cos(a), math.sin(a)])


def at_cosine(c: float) -> np.ndarray:
    return np.array([c, math.sqrt(1.0 - c * c)])


def labels(speakers: OnlineSpeakers, encoder: GivenVoices, *segments: tuple[np.ndarray | None, int]) -> list:
    out = []
    for vector, samples in segments:
        encoder.next = vector
        out.append(speakers.assign(np.zeros(samples, np.float32)))
    return out


@pytest.fixture
def encoder() -> GivenVoices:
    return GivenVoices()


def test_a_voice_at_the_threshold_joins_and_one_just_below_founds_a_speaker(encoder: GivenVoices) -> None:
    speakers = OnlineSpeakers(encoder, threshold=0.8)
    assert labels(speakers, encoder, (voice(0), LONG), (at_cosine(0.8), LONG)) == ["S1", "S1"]
    speakers = OnlineSpeakers(encoder, threshold=0.8)
    assert labels(speakers, encoder, (voice(0), LONG), (at_cosine(0.79), LONG)) == ["S1", "S2"]
    assert speakers.ids == ["S1", "S2"]


def test_a_segment_joins_the_closest_of_the_known_speakers(encoder: GivenVoices) -> None:
    speakers = OnlineSpeakers(encoder, threshold=0.5)
    got = labels(speakers, encoder, (voice(0), LONG), (voice(90), LONG), (voice(70), LONG), (voice(20), LONG))
    assert got == ["S1", "S2", "S2", "S1"]


def test_a_matched_speaker_moves_towards_each_segment_by_its_share(encoder: GivenVoices) -> None:
    # S1 heard at 0°, then at 36.87° (cosine 0.8): its centre moves to 18.4°, where 53.13° (0.6 from
    # 0°) is within 0.8 of it — but only if S1 had been heard once before, not twice
    once = OnlineSpeakers(encoder)
    near, far = (at_cosine(0.8), LONG), (at_cosine(0.6), LONG)
    assert labels(once, encoder, (voice(0), LONG), near, far) == ["S1"] * 3
    twice = OnlineSpeakers(encoder)
    assert labels(twice, encoder, (voice(0), LONG), (voice(0), LONG), near, far) == ["S1", "S1", "S1", "S2"]


def test_a_short_segment_joins_the_closest_speaker_without_moving_it(encoder: GivenVoices) -> None:
    speakers = OnlineSpeakers(encoder)
    got = labels(speakers, encoder, (voice(0), LONG), (voice(90), SHORT), (at_cosine(0.6), LONG))
    assert got == ["S1", "S1", "S2"]  # the short 90° did not pull S1 towards the third voice
    assert labels(speakers, encoder, (voice(180), SHORT)) == ["S2"]  # the closer of the two, however far


def test_a_short_first_segment_founds_the_first_speaker(encoder: GivenVoices) -> None:
    speakers = OnlineSpeakers(encoder)
    got = labels(speakers, encoder, (voice(90), SHORT), (voice(0), LONG), (voice(85), LONG))
    assert got == ["S1", "S2", "S1"]


def test_a_speaker_is_stored_as_a_direction_whatever_the_vectors_length(encoder: GivenVoices) -> None:
    speakers = OnlineSpeakers(encoder)
    # 25° is 0.91 from the first voice's direction (0.45 from the half-length vector itself)
    assert labels(speakers, encoder, (voice(0, length=0.5), LONG), (voice(25), LONG)) == ["S1", "S1"]


def test_a_segment_with_too_little_voice_goes_to_the_most_heard_speaker(encoder: GivenVoices) -> None:
    speakers = OnlineSpeakers(encoder)
    assert labels(speakers, encoder, (None, LONG)) == ["S1"] and speakers.ids == []
    got = labels(speakers, encoder, (voice(0), LONG), (voice(90), LONG), (voice(90), LONG), (None, LONG))
    assert got == ["S1", "S2", "S2", "S2"] and speakers.ids == ["S1", "S2"]


@pytest.mark.parametrize("threshold", [-1.0, 1.0, 1.5, float("nan")])
def test_a_threshold_outside_minus_one_to_one_is_refused(encoder: GivenVoices, threshold: float) -> None:
    with pytest.raises(ValueError, match=rf"must be in \(-1, 1\), got {threshold}"):
        OnlineSpeakers(encoder, threshold=threshold)


def test_thresholds_just_inside_are_taken_and_the_encoder_loads_when_asked(encoder: GivenVoices) -> None:
    for threshold in (-0.99, 0.99):
        OnlineSpeakers(encoder, threshold=threshold).load()
    assert encoder.loaded == 2
    OnlineSpeakers(object()).load()  # an encoder without `load` needs none


def test_each_segment_counts_once_in_its_speakers_running_mean(encoder: GivenVoices) -> None:
    # 0° then three times 35°: the centre is at 26.2° (each segment one share); a voice at 62.5° is
    # 0.806 from it and joins. Counting a segment twice would leave the centre at 24.0° (0.783 away)
    speakers = OnlineSpeakers(encoder)
    turns = [(voice(0), LONG)] + [(voice(35), LONG)] * 3 + [(voice(62.5), LONG)]
    assert labels(speakers, encoder, *turns) == ["S1"] * 5
