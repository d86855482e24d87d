"""Provisional speakers: each turn of the demo against the voices heard before it (real GE2E encoder)."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from engine.live.online_speakers import OnlineSpeakers
from engine.speakers.embedding import SpeakerEncoder
from tests.engine.live.conftest import DEMO, STM


def turns(n: int) -> list[tuple[str, np.ndarray]]:
    audio, rate = sf.read(DEMO, dtype="float32")
    out = []
    for line in STM.read_text().splitlines()[:n]:
        _, _, who, start, end, _ = line.split(maxsplit=5)
        out.append((who, audio[int(float(start) * rate) : int(float(end) * rate)]))
    return out


def test_the_same_voice_keeps_its_label_and_other_voices_get_new_ones() -> None:
    speakers = OnlineSpeakers(SpeakerEncoder())
    labels: dict[str, set[str]] = {}
    for who, samples in turns(12):
        labels.setdefault(who, set()).add(speakers.assign(samples))
    # alice and carol (two female voices) are each labelled consistently and apart from everyone;
    # dave and bob are two synthetic male voices close enough (cosine 0.88) to share a label
    assert len(labels["alice"]) == 1 and len(labels["carol"]) == 1
    assert labels["alice"] != labels["carol"]
    assert labels["dave"] == labels["bob"] and not labels["dave"] & (labels["alice"] | labels["carol"])
    assert speakers.ids == ["S1", "S2", "S3"]


def test_a_short_reply_joins_a_known_voice_instead_of_founding_one() -> None:
    speakers = OnlineSpeakers(SpeakerEncoder())
    (_, first), (_, second) = turns(2)
    a = speakers.assign(first)
    b = speakers.assign(second[:8000])  # half a second of another voice
    assert a == b and speakers.ids == ["S1"]


def test_the_threshold_is_validated() -> None:
    with pytest.raises(ValueError, match="threshold"):
        OnlineSpeakers(SpeakerEncoder(), threshold=1.5)
