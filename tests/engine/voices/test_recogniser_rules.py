"""The recogniser's own rules, in process with exact vectors: who is compared at all (at least
`min_seconds` of speech), that the request's match settings are the ones applied, that a cancel
reaches the embedding and stops the naming, that an empty library costs no embedding, and that an
embedder answering for the wrong number of speakers is an error, never a shifted name."""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest

from engine.errors import Cancelled, check_cancel
from engine.pipeline import default_speakers
from engine.types import Recording, Transcript, Utterance
from engine.voices import MatchConfig, VoiceLibrary, VoiceRecogniser, VoiceSample
from engine.voices.recogniser import GE2E

DIM = GE2E.dim


def unit(index: int, lean: float = 0.0) -> np.ndarray:
    """Axis `index`, leaning `lean` towards the last axis (cosine to the axis: 1/sqrt(1+lean²))."""
    v = np.zeros(DIM, np.float32)
    v[index], v[-1] = 1.0, lean
    return v / np.linalg.norm(v)


class ExactEmbedder:
    """Gives speaker i (in the order asked) `vectors[i]`; records what it was given."""

    model = GE2E

    def __init__(self, *vectors: np.ndarray | None, count: int | None = None) -> None:
        self.vectors, self.count = list(vectors), count
        self.calls: list[int] = []
        self.cancels: list[threading.Event | None] = []

    def load(self) -> None:
        pass

    def embed(self, recording, span_groups, cancel=None):
        self.calls.append(len(span_groups))
        self.cancels.append(cancel)
        check_cancel(cancel)
        return self.vectors[: self.count if self.count is not None else len(span_groups)]


def meeting(*turns: tuple[float, float, str]) -> tuple[Transcript, Recording]:
    utterances = tuple(Utterance(a, b, "words", s) for a, b, s in turns)
    end = max(b for _, b, _ in turns)
    silence = Recording(np.zeros(int(end * 100) + 1, np.float32), 100)  # the vectors come from ExactEmbedder
    return Transcript(utterances, default_speakers(utterances), end), silence


@pytest.fixture
def library(tmp_path) -> VoiceLibrary:
    library = VoiceLibrary(tmp_path / "voices.sqlite")
    library.add("Alice", [VoiceSample(unit(0), GE2E)])
    library.add("Bob", [VoiceSample(unit(1), GE2E)])
    return library


def names(t: Transcript) -> dict[str, str]:
    return {s.id: s.name for s in t.speakers}


def test_a_speaker_with_exactly_the_least_speech_is_compared_and_one_with_less_is_not(library):
    transcript, recording = meeting((0.0, 4.0, "S1"), (5.0, 8.99, "S2"))
    embedder = ExactEmbedder(unit(0))
    named = VoiceRecogniser(library, embedder, MatchConfig(min_seconds=4.0)).name(transcript, recording)
    assert names(named) == {"S1": "Alice", "S2": "Speaker 2"} and embedder.calls == [1]


def test_the_recognisers_own_match_settings_decide(library):
    transcript, recording = meeting((0.0, 10.0, "S1"))
    leaning = unit(0, lean=0.33)  # cosine 0.95 to Alice: named at 0.91, not at 0.99
    default = VoiceRecogniser(library, ExactEmbedder(leaning))
    assert names(default.name(transcript, recording)) == {"S1": "Alice"}
    strict = VoiceRecogniser(library, ExactEmbedder(leaning), MatchConfig(threshold=0.99))
    assert names(strict.name(transcript, recording)) == {"S1": "Speaker 1"}


def test_a_cancel_reaches_the_embedding_and_one_during_it_stops_the_naming(library):
    transcript, recording = meeting((0.0, 10.0, "S1"))
    cancel = threading.Event()

    class CancelledMidway(ExactEmbedder):
        def embed(self, recording, span_groups, cancel=None):
            vectors = super().embed(recording, span_groups, cancel)
            cancel.set()  # the user cancels while the last piece is embedded
            return vectors

    embedder = CancelledMidway(unit(0))
    with pytest.raises(Cancelled):
        VoiceRecogniser(library, embedder).name(transcript, recording, cancel)
    assert embedder.cancels == [cancel]


def test_an_empty_library_costs_no_embedding(tmp_path):
    transcript, recording = meeting((0.0, 10.0, "S1"))
    empty = VoiceLibrary(tmp_path / "none.sqlite")
    embedder = ExactEmbedder(unit(0))
    assert VoiceRecogniser(empty, embedder).name(transcript, recording) is transcript
    assert embedder.calls == []


def test_an_embedder_answering_for_fewer_speakers_is_an_error_not_a_shifted_name(library):
    transcript, recording = meeting((0.0, 10.0, "S1"), (10.0, 20.0, "S2"))
    with pytest.raises(ValueError):
        VoiceRecogniser(library, ExactEmbedder(unit(1), unit(0), count=1)).name(transcript, recording)


def test_a_library_of_other_models_is_refused_naming_each_and_what_to_do(tmp_path):
    from engine.voices import EmbeddingModel, VoiceLibraryError

    library = VoiceLibrary(tmp_path / "old.sqlite")
    old, older = EmbeddingModel("ecapa", "2", DIM), EmbeddingModel("ecapa", "1", DIM)
    library.add("Alice", [VoiceSample(unit(0), old)])
    library.add("Bob", [VoiceSample(unit(1), older)])
    transcript, recording = meeting((0.0, 10.0, "S1"))
    recogniser = VoiceRecogniser(library, ExactEmbedder(unit(0)))
    for attempt in (recogniser.load, lambda: recogniser.name(transcript, recording)):  # before and at naming
        with pytest.raises(VoiceLibraryError) as refused:
            attempt()
        assert str(refused.value) == (
            f"the voices in {library.path} were embedded with the speaker model ecapa 1, ecapa 2; this "
            "Murmur embeds with resemblyzer-ge2e 1, and embeddings of different models are never compared: "
            "remove those voices and add them again"
        )


def test_people_stored_with_another_model_are_named_in_one_warning_and_the_rest_compared(tmp_path, caplog):
    from engine.voices import EmbeddingModel

    transcript, recording = meeting((0.0, 10.0, "S1"))
    library = VoiceLibrary(tmp_path / "mixed.sqlite")
    library.add("Alice", [VoiceSample(unit(0), GE2E)])
    for name in ("Carol", "Dave"):
        library.add(name, [VoiceSample(unit(2), EmbeddingModel("ecapa", "2", DIM))])
    caplog.set_level(logging.INFO, logger="engine.voices.recogniser")
    assert names(VoiceRecogniser(library, ExactEmbedder(unit(0))).name(transcript, recording)) == {
        "S1": "Alice"
    }
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "not compared (stored with another speaker model): Carol, Dave")
    ]
    caplog.clear()
    library.remove("Carol")
    library.remove("Dave")
    VoiceRecogniser(library, ExactEmbedder(unit(0))).name(transcript, recording)
    assert caplog.records == []  # nobody skipped: nothing said


def test_an_embedder_answering_for_fewer_groups_of_speech_is_an_error_not_fewer_samples():
    from engine.voices.recogniser import enrolment_samples

    _, recording = meeting((0.0, 45.0, "S1"))
    spans = [(0.0, 15.0), (15.0, 30.0), (30.0, 45.0)]  # two samples' worth: 30 s, then 15 s
    assert len(enrolment_samples(recording, spans, None, ExactEmbedder(unit(0), unit(1)))) == 2
    with pytest.raises(ValueError):
        enrolment_samples(recording, spans, None, ExactEmbedder(unit(0), unit(1), count=1))


def test_a_named_speaker_keeps_its_score_to_four_decimals_and_the_others_have_none(library):
    transcript, recording = meeting((0.0, 10.0, "S1"), (10.0, 20.0, "S2"))
    leaning = unit(0, lean=0.33)  # cosine 1/sqrt(1 + 0.33²) = 0.949626… to Alice
    named = VoiceRecogniser(library, ExactEmbedder(leaning, unit(2))).name(transcript, recording)
    assert [(s.name, s.score) for s in named.speakers] == [("Alice", 0.9496), ("Speaker 2", None)]


def test_recognition_without_a_library_says_how_to_make_one_and_creates_nothing(tmp_path):
    from engine.voices import VoiceLibraryError

    recogniser = VoiceRecogniser(VoiceLibrary(tmp_path / "none" / "voices.sqlite"), ExactEmbedder())
    with pytest.raises(VoiceLibraryError) as missing:
        recogniser.load()
    assert str(missing.value) == (
        f"there is no voice library at {tmp_path / 'none' / 'voices.sqlite'} yet: remember a voice first "
        '(murmur voices add NAME --from TRANSCRIPT.json --speaker "Speaker 2")'
    )
    assert not (tmp_path / "none").exists()


def test_samples_remember_the_audio_stream_and_channel_their_recording_was_decoded_from():
    # catches: a sample of the right-hand channel played back as the mix, or of stream 1 as the default
    from dataclasses import replace

    from engine.voices.recogniser import enrolment_samples

    _, recording = meeting((0.0, 45.0, "S1"))
    spans = [(0.0, 15.0), (15.0, 30.0), (30.0, 45.0)]
    right_of_second = replace(recording, stream=1, channel=1)
    samples = enrolment_samples(right_of_second, spans, "two.mkv", ExactEmbedder(unit(0), unit(1)))
    assert [(s.recording, s.stream, s.channel) for s in samples] == [("two.mkv", 1, 1)] * 2
    [mixed, _] = enrolment_samples(recording, spans, "one.flac", ExactEmbedder(unit(0), unit(1)))
    assert (mixed.stream, mixed.channel) == (None, None)
