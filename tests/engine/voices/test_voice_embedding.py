"""Voice samples and recognition with the real GE2E encoder, in process and in seconds: two espeak
voices speak in turn in one short recording at espeak's own 22,050 Hz. A group of spans embeds as
its speech joined and brought to 16 kHz, a remembered voice is one sample per ~20 s of speech with
the time range it came from, too little speech is refused, and a recogniser made with no embedder
of its own names the people it knows with the default encoder."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from engine.audio.resample import resample
from engine.errors import Cancelled
from engine.pipeline import default_speakers
from engine.speakers.embedding import SAMPLE_RATE
from engine.synth import ROSTER
from engine.synth.espeak import Espeak
from engine.synth.script import load_corpus
from engine.types import Recording, Transcript, Utterance
from engine.voices import VoiceEmbedder, VoiceLibrary, VoiceRecogniser
from engine.voices.recogniser import GE2E, enrolment_samples
from engine.voices.speech import Span

PEOPLE = {p.id: p for p in ROSTER}
PAUSE = 0.3  # seconds of silence after each sentence


@dataclass(frozen=True)
class Talk:
    """Alice's sentences, then Bob's, each followed by a pause; the spans are each one's sentences."""

    recording: Recording  # at espeak's rate (22,050 Hz), named talk.flac
    alice: list[Span]
    bob: list[Span]

    def at_16_khz(self) -> Recording:
        return Recording(
            resample(self.recording.samples, self.recording.sample_rate, SAMPLE_RATE), SAMPLE_RATE
        )


@pytest.fixture(scope="module")
def talk() -> Talk:
    lines = load_corpus().sentences("agenda")
    turns = [("alice", s) for s in lines[:12]] + [("bob", s) for s in lines[12:15]]
    pieces: list[np.ndarray] = []
    spans: dict[str, list[Span]] = {"alice": [], "bob": []}
    with Espeak() as espeak:
        rate, at = espeak.sample_rate, 0
        for person, text in turns:
            speech = espeak.synthesize(text, PEOPLE[person].voice).samples
            spans[person].append((at / rate, (at + len(speech)) / rate))
            pieces += [speech, np.zeros(round(PAUSE * rate), np.float32)]
            at += len(speech) + round(PAUSE * rate)
    recording = Recording(np.concatenate(pieces), rate, source=Path("/clips/talk.flac"))
    return Talk(recording, spans["alice"], spans["bob"])


@pytest.fixture(scope="module")
def embedder() -> VoiceEmbedder:
    return VoiceEmbedder()


def joined(recording: Recording, spans: list[Span]) -> np.ndarray:
    return np.concatenate([recording.slice(a, b) for a, b in spans])


def test_a_group_of_spans_embeds_as_its_speech_joined_at_16_khz_whatever_the_recordings_rate(talk, embedder):
    at_16 = talk.at_16_khz()
    alice, bob, nothing = embedder.embed(at_16, [talk.alice, talk.bob, []])
    expected = embedder.encoder.embed_pieces([joined(at_16, talk.alice), joined(at_16, talk.bob)])
    np.testing.assert_array_equal(alice, expected[0])
    np.testing.assert_array_equal(bob, expected[1])
    assert nothing is None  # a group without speech has no embedding
    alice_22, bob_22 = embedder.embed(talk.recording, [talk.alice, talk.bob])
    assert float(alice_22 @ alice) > 0.999 and float(bob_22 @ bob) > 0.999  # the same voices at 22,050 Hz
    assert float(alice @ bob) < 0.8  # two voices: not alike
    # unresampled, 22,050 Hz read as 16 kHz would be a lower, slower voice
    as_if_16 = embedder.encoder.embed_pieces([joined(talk.recording, talk.alice)])[0]
    assert float(as_if_16 @ alice) < 0.8


def test_a_cancelled_embedding_stops_before_the_encoder_runs(talk, embedder):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        embedder.embed(talk.recording, [talk.alice], cancel)


def test_a_voice_is_remembered_as_one_sample_per_twenty_seconds_with_the_time_range_of_each(talk, embedder):
    samples = enrolment_samples(talk.recording, talk.alice, "talk.flac", embedder)
    # Alice's sentences last 3.75, 3.39, 2.94, 2.84, 3.75, 2.55, 2.99 s (22.2 s: a sample), then five more
    # (14.8 s: more than half of 20 s, a sample of their own)
    first, second = talk.alice[:7], talk.alice[7:]
    assert [(s.start, s.end) for s in samples] == [
        (round(first[0][0], 3), round(first[-1][1], 3)),
        (round(second[0][0], 3), round(second[-1][1], 3)),
    ]
    assert samples[1].start != round(second[0][0], 4)  # times kept to the millisecond, no finer
    assert samples[1].end != round(second[-1][1], 4)
    assert [(s.recording, s.model) for s in samples] == [("talk.flac", GE2E)] * 2
    expected = embedder.embed(talk.recording, [first, second])
    for sample, vector in zip(samples, expected, strict=True):
        np.testing.assert_allclose(sample.vector, vector, atol=1e-6)


def test_too_little_speech_is_refused_saying_how_much_and_exactly_enough_is_remembered(talk, embedder):
    start = talk.alice[0][0]
    short = [(start + 0.5, start + 1.75), (start + 2.0, start + 3.25)]  # 2.5 s
    with pytest.raises(ValueError) as refused:
        enrolment_samples(talk.recording, short, "talk.flac", embedder)
    assert str(refused.value) == "only 2.5 s of this voice, too little to remember it (at least 3 s)"
    enough = [(1.0, 2.5), (3.0, 4.5)]  # 3 s exactly, inside Alice's first sentences
    [sample] = enrolment_samples(talk.recording, enough, None, embedder)
    assert (sample.recording, sample.start, sample.end) == (None, 1.0, 4.5)


def test_a_recogniser_made_without_an_embedder_names_known_voices_with_the_default_encoder(
    tmp_path, talk, embedder
):
    library = VoiceLibrary(tmp_path / "voices.sqlite")
    library.add("Alice", enrolment_samples(talk.recording, talk.alice[:7], "talk.flac", embedder))
    library.add("Bob", enrolment_samples(talk.recording, talk.bob, "talk.flac", embedder))
    turns = tuple(Utterance(a, b, "words", "S1") for a, b in talk.alice[7:]) + tuple(
        Utterance(a, b, "words", "S2") for a, b in talk.bob
    )
    transcript = Transcript(turns, default_speakers(turns), talk.recording.duration)
    recogniser = VoiceRecogniser(library)
    assert isinstance(recogniser.embedder, VoiceEmbedder) and recogniser.embedder.model == GE2E
    named = recogniser.name(transcript, talk.at_16_khz())
    assert {s.id: s.name for s in named.speakers} == {"S1": "Alice", "S2": "Bob"}
