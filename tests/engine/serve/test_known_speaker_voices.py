"""A request's reference clips as a one-request voice library, with the real GE2E encoder: the
demo's alice and carol given as references name their own later turns, and nobody else."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.audio.io import load_audio
from engine.serve.known_speakers import ReferenceVoices, known_speakers, reference_recogniser
from engine.speakers.embedding import SpeakerEncoder
from engine.types import Speaker, Transcript, Utterance
from engine.voices.recogniser import VoiceEmbedder

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "resources" / "demo" / "meeting.flac"
STM = ROOT / "resources" / "demo" / "meeting.stm"


def reference(start: float, end: float) -> str:
    samples, rate = sf.read(DEMO, dtype="float32", start=int(start * 16000), stop=int(end * 16000))
    buffer = io.BytesIO()
    sf.write(buffer, samples, rate, format="WAV")
    return "data:audio/wav;base64," + base64.b64encode(buffer.getvalue()).decode()


@pytest.fixture(scope="module")
def references():
    # alice's and carol's turns of the first 20 s; the transcript below is of 40-100 s
    return known_speakers(["Alice", "Carol"], [reference(15.028, 18.408), reference(4.700, 7.838)])


def later_turns() -> Transcript:
    ids = {"alice": "S1", "carol": "S2", "bob": "S3", "dave": "S4"}
    utterances = []
    for line in STM.read_text().splitlines():
        _, _, who, start, end, text = line.split(maxsplit=5)
        if float(start) >= 40.0 and float(end) <= 100.0:
            utterances.append(Utterance(float(start), float(end), text, ids[who]))
    speakers = tuple(Speaker(sid, f"Speaker {sid[1:]}") for sid in ids.values())
    return Transcript(tuple(utterances), speakers, 100.0)


class Diarizer:
    """What the recogniser takes from the server's diarizer: its loaded speaker encoder."""

    def __init__(self) -> None:
        self.encoder = SpeakerEncoder()


def test_the_references_name_their_own_voices_and_no_one_else(references) -> None:
    recording = load_audio(DEMO, 16000)
    diarizer = Diarizer()
    recogniser = reference_recogniser(references, diarizer)
    assert recogniser.embedder.encoder is diarizer.encoder  # the diarizer's encoder, loaded once
    recogniser.load()
    named = recogniser.name(later_turns(), recording)
    assert [s.name for s in named.speakers] == ["Alice", "Carol", "Speaker 3", "Speaker 4"]
    assert all(s.score is not None and s.score > 0.8 for s in named.speakers[:2])


def test_without_a_diarizer_encoder_the_recogniser_brings_its_own(references) -> None:
    class NoEncoder:
        encoder = "not a speaker encoder"

    for diarizer in (None, NoEncoder()):
        assert isinstance(reference_recogniser(references, diarizer).embedder.encoder, SpeakerEncoder)


class CountingEmbedder:
    """The encoder's embeddings, counted, and nothing for a clip it is told to miss."""

    def __init__(self, miss: int | None = None) -> None:
        self.inner = VoiceEmbedder()
        self.model, self.calls, self.loaded, self.miss = self.inner.model, 0, 0, miss

    def load(self) -> None:
        self.loaded += 1
        self.inner.load()

    def embed(self, recording, groups, cancel=None):
        self.calls += 1
        vectors = self.inner.embed(recording, groups, cancel)
        return [None if self.calls - 1 == self.miss else v for v in vectors]


def test_each_reference_is_embedded_once_whole_and_one_without_voice_is_left_out(references) -> None:
    embedder = CountingEmbedder()
    voices = ReferenceVoices(references, embedder)
    assert voices.exists() and str(voices.path) == "known_speaker_references"
    first = voices.voices()
    assert voices.voices() is first and (embedder.calls, embedder.loaded) == (2, 1)
    assert [v.name for v in first] == ["Alice", "Carol"]
    whole = embedder.inner.embed(references.clips[0], [[(0.0, references.clips[0].duration)]])[0]
    assert np.allclose(first[0].samples[0].vector, whole) and first[0].samples[0].model == embedder.model
    missed = ReferenceVoices(references, CountingEmbedder(miss=0)).voices()
    assert [v.name for v in missed] == ["Carol"]
