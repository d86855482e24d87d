"""Recognition with the real GE2E encoder on espeak-ng meetings in which the same voices meet again:
enrolled people are named in another recording, strangers are not, scores are kept, a removed
voice is never named again, and a library of another embedding model is refused."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from engine.errors import Cancelled, ModelLoadError
from engine.export.json_format import transcript_dict, transcript_from_dict
from engine.pipeline import default_speakers
from engine.speakers.embedding import SpeakerEncoder
from engine.synth import ROSTER, MeetingConfig, SyntheticMeeting, build_meeting
from engine.types import Recording, SpeechSegment, Transcript, Utterance
from engine.voices import MatchConfig, VoiceEmbedder, VoiceLibrary, VoiceLibraryError, VoiceRecogniser
from engine.voices.enrol import find_speaker, samples_from_audio, samples_from_transcript

PEOPLE = {p.id: p for p in ROSTER}


def meeting(seed: int, *ids: str, rate: int = 16000) -> SyntheticMeeting:
    cast = tuple(PEOPLE[i] for i in ids)
    return build_meeting(
        MeetingConfig(len(cast), 60.0, seed, cast=cast, sample_rate=rate, session_id=f"m{seed}")
    )


def as_found(m: SyntheticMeeting) -> Transcript:
    """The meeting as a diarized transcript: "S1", "S2"… by first turn, default names."""
    ids = {p: f"S{i + 1}" for i, p in enumerate(dict.fromkeys(u.speaker for u in m.turns))}
    turns = tuple(Utterance(u.start, u.end, u.text, ids[u.speaker]) for u in m.turns)
    return Transcript(turns, default_speakers(turns), m.duration, source=f"{m.config.session_id}.flac")


def who(m: SyntheticMeeting, person: str) -> str:
    """The found speaker id `person` has in `as_found(m)`."""
    order = list(dict.fromkeys(u.speaker for u in m.turns))
    return f"S{order.index(person) + 1}"


@pytest.fixture(scope="module")
def embedder() -> VoiceEmbedder:
    return VoiceEmbedder()


@pytest.fixture(scope="module")
def monday() -> SyntheticMeeting:
    return meeting(11, "alice", "bob", "carol")


@pytest.fixture(scope="module")
def tuesday() -> SyntheticMeeting:
    return meeting(12, "carol", "frank", "alice", "henry")


@pytest.fixture
def library(tmp_path, monday, embedder) -> VoiceLibrary:
    library = VoiceLibrary(tmp_path / "voices.sqlite")
    found = as_found(monday)
    for person in ("alice", "carol"):
        label = found.speaker_name(who(monday, person))  # "Speaker 2", as a user picks it
        library.add(person.capitalize(), samples_from_transcript(found, label, monday.recording(), embedder))
    return library


def names(t: Transcript) -> dict[str, str]:
    return {s.id: s.name for s in t.speakers}


def test_enrolled_people_are_named_in_another_recording_and_strangers_are_not(library, tuesday, embedder):
    recogniser = VoiceRecogniser(library, embedder)
    recogniser.load()
    named = recogniser.name(as_found(tuesday), tuesday.recording())
    alice, carol = who(tuesday, "alice"), who(tuesday, "carol")
    frank, henry = who(tuesday, "frank"), who(tuesday, "henry")
    assert names(named) == {alice: "Alice", carol: "Carol", frank: f"Speaker {frank[1:]}",
                            henry: f"Speaker {henry[1:]}"}  # fmt: skip
    scores = {s.id: s.score for s in named.speakers}
    assert round(scores[alice], 4) == scores[alice] != round(scores[alice], 3)  # four decimals kept
    assert scores[alice] > MatchConfig().threshold and scores[carol] > MatchConfig().threshold
    assert scores[frank] is None and scores[henry] is None
    assert transcript_from_dict(transcript_dict(named)).speakers == named.speakers  # the JSON keeps scores


def test_samples_keep_the_recording_and_time_range_they_came_from(library, monday):
    alice = library.voice("Alice")
    own = [u for u in monday.turns if u.speaker == "alice"]
    assert {s.recording for s in alice.samples} == {"m11.flac"}
    assert round(own[0].start, 3) <= alice.samples[0].start < alice.samples[-1].end <= round(own[-1].end, 3)


def test_a_recording_at_another_sample_rate_is_recognised_the_same(library, embedder):
    other = meeting(12, "carol", "frank", "alice", "henry", rate=24000)
    named = VoiceRecogniser(library, embedder).name(as_found(other), other.recording())
    assert names(named)[who(other, "alice")] == "Alice" and names(named)[who(other, "carol")] == "Carol"


def test_a_removed_voice_is_never_named_again(library, tuesday, embedder):
    recogniser = VoiceRecogniser(library, embedder)
    library.remove("Alice")
    named = recogniser.name(as_found(tuesday), tuesday.recording())
    alice = who(tuesday, "alice")
    assert names(named)[alice] == f"Speaker {alice[1:]}"
    assert "Alice" not in names(named).values() and "Carol" in names(named).values()


def test_a_speaker_with_too_little_speech_is_not_compared(library, tuesday, embedder):
    quiet = VoiceRecogniser(library, embedder, MatchConfig(min_seconds=tuesday.duration))
    assert quiet.name(as_found(tuesday), tuesday.recording()).speakers == as_found(tuesday).speakers


def test_a_library_of_another_embedding_model_is_refused_with_a_clear_message(library, tuesday, embedder):
    with sqlite3.connect(library.path) as db:
        db.execute("UPDATE embeddings SET model = 'ecapa', model_version = '2'")
    recogniser = VoiceRecogniser(library, embedder)
    message = (
        r"embedded with the speaker model ecapa 2; this Murmur embeds with resemblyzer-ge2e 1.*never compared"
    )
    with pytest.raises(VoiceLibraryError, match=message):
        recogniser.load()
    with pytest.raises(VoiceLibraryError, match=message):
        recogniser.name(as_found(tuesday), tuesday.recording())


def test_recognition_without_a_library_says_how_to_make_one_and_creates_nothing(tmp_path, embedder):
    recogniser = VoiceRecogniser(VoiceLibrary(tmp_path / "none" / "voices.sqlite"), embedder)
    with pytest.raises(VoiceLibraryError) as missing:
        recogniser.load()
    assert str(missing.value) == (
        f"there is no voice library at {recogniser.library.path} yet: remember a voice first "
        '(murmur voices add NAME --from TRANSCRIPT.json --speaker "Speaker 2")'
    )
    assert not (tmp_path / "none").exists()


def test_too_little_of_a_voice_is_not_remembered(monday, embedder):
    found = as_found(monday)
    first = found.utterances[0]
    short = Transcript((Utterance(first.start, first.start + 2.9, "", "S1"),), found.speakers[:1])
    with pytest.raises(ValueError, match="too little to remember"):
        samples_from_transcript(short, "Speaker 1", monday.recording(), embedder)


def test_a_voice_remembered_from_a_recording_of_that_person_alone_is_named(tmp_path, tuesday, embedder):
    alone = meeting(5, "alice")
    recording = Recording(alone.samples, alone.sample_rate, source=Path("/clips/alice.flac"))
    speech = [SpeechSegment(u.start, u.end) for u in alone.turns]
    samples = samples_from_audio(recording, speech, embedder)
    assert len(samples) >= 2 and {s.recording for s in samples} == {"alice.flac"}
    assert samples[0].start == round(speech[0].start, 3) and samples[-1].end == round(speech[-1].end, 3)
    library = VoiceLibrary(tmp_path / "voices.sqlite")
    library.add("Alice", samples)
    named = VoiceRecogniser(library, embedder).name(as_found(tuesday), tuesday.recording())
    assert [s.name for s in named.speakers if s.score is not None] == ["Alice"]
    assert names(named)[who(tuesday, "alice")] == "Alice"


def test_people_of_another_model_are_skipped_with_a_warning_and_the_others_named(
    library, tuesday, embedder, caplog
):
    with sqlite3.connect(library.path) as db:
        db.execute(
            "UPDATE embeddings SET model = 'ecapa' "
            "WHERE person = (SELECT id FROM people WHERE name = 'Carol')"
        )
    named = VoiceRecogniser(library, embedder).name(as_found(tuesday), tuesday.recording())
    assert [s.name for s in named.speakers if s.score is not None] == ["Alice"]
    assert "not compared (stored with another speaker model): Carol" in caplog.text


def test_recognition_stops_when_cancelled(library, tuesday, embedder):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        VoiceRecogniser(library, embedder).name(as_found(tuesday), tuesday.recording(), cancel)


def test_a_missing_speaker_encoder_is_reported_when_loading(library):
    broken = VoiceEmbedder(SpeakerEncoder(weights=library.path.with_name("missing.onnx")))
    with pytest.raises(ModelLoadError, match="could not load the speaker encoder"):
        VoiceRecogniser(library, broken).load()


def test_a_speaker_is_found_by_name_or_id_in_any_letter_case(monday):
    found = as_found(monday)
    assert find_speaker(found, " speaker 2 ").id == "S2" and find_speaker(found, "s3").name == "Speaker 3"
    with pytest.raises(
        ValueError,
        match=r"^no speaker 'Bob' in this transcript \(its speakers: 'Speaker 1', 'Speaker 2', "
        r"'Speaker 3'\)$",
    ):
        find_speaker(found, "Bob")
    with pytest.raises(ValueError, match=r"\(its speakers: none\)$"):
        find_speaker(Transcript(()), "Bob")
