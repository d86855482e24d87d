"""Shared, expensive fixtures of the speaker tests: one loaded encoder, the demo and its diarization."""

from __future__ import annotations

import pytest
from speaker_sim import DEMO, RefTurn, load_turns

from engine.audio.io import load_audio
from engine.audio.vad import SileroVad
from engine.speakers.diarization import Diarization
from engine.speakers.embedded import EmbeddedDiarizer
from engine.speakers.embedding import SpeakerEncoder
from engine.types import Recording, SpeechSegment


@pytest.fixture(scope="session")
def encoder() -> SpeakerEncoder:
    return SpeakerEncoder()


@pytest.fixture(scope="session")
def diarizer(encoder: SpeakerEncoder) -> EmbeddedDiarizer:
    return EmbeddedDiarizer(encoder=encoder)


@pytest.fixture(scope="session")
def demo() -> Recording:
    return load_audio(DEMO.with_suffix(".flac"), 16000)


@pytest.fixture(scope="session")
def demo_speech(demo: Recording) -> list[SpeechSegment]:
    return SileroVad().detect(demo)


@pytest.fixture(scope="session")
def demo_turns() -> list[RefTurn]:
    return load_turns(DEMO)


@pytest.fixture(scope="session")
def demo_diarization(
    diarizer: EmbeddedDiarizer, demo: Recording, demo_speech: list[SpeechSegment]
) -> Diarization:
    return diarizer.diarize(demo, demo_speech)
