"""What the Known Voices window lists and the labels around it, without a window: a row per
person in name order, the sample count worded for one or many, the date a person was added, the
"Speaker N" a wrongly recognised speaker goes back to, a speaker's own speech remembered, and a
name refused before any audio is embedded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.known_voices import (
    VoiceRow,
    default_label,
    recognised_short,
    recognised_text,
    remember,
    rows,
    user_library,
)
from app.speakers import SpeakerInfo
from engine.audio.io import load_audio
from engine.speakers.embedding import SAMPLE_RATE
from engine.types import Recording, Speaker, Transcript, Utterance
from engine.voices import VoiceEmbedder, VoiceLibrary, library_path
from engine.voices.samples import EmbeddingModel, VoiceSample

MODEL = EmbeddingModel("resemblyzer-ge2e", "1", 4)
DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "meeting.flac"


def sample(seed: int) -> VoiceSample:
    vector = np.random.default_rng(seed).standard_normal(4).astype(np.float32)
    return VoiceSample(vector / np.linalg.norm(vector), MODEL, "meeting.flac", 1.0, 3.0)


def test_a_row_says_sample_for_one_and_samples_for_more():
    assert VoiceRow("Ann", 1, "2026-12-03").text == "Ann — 1 sample, added 2026-12-03"
    assert VoiceRow("Bo", 2, "2026-12-01").text == "Bo — 2 samples, added 2026-12-01"
    assert VoiceRow("Cy", 0, "2026-12-01").text == "Cy — 0 samples, added 2026-12-01"


def test_the_window_lists_people_by_name_whatever_their_case_with_their_samples_and_day(tmp_path):
    library = VoiceLibrary(tmp_path / "voices.db")
    assert rows(library) == []  # no library file yet: nothing listed, nothing created
    assert not (tmp_path / "voices.db").exists()
    library.add("bob", [sample(1), sample(2)])
    library.add("Alice", [sample(3)])
    library.add("Carol", [sample(4)])
    listed = rows(library)
    assert [(r.name, r.samples) for r in listed] == [("Alice", 1), ("bob", 2), ("Carol", 1)]
    assert all(len(r.added) == 10 and r.added[4] == "-" and r.added[7] == "-" for r in listed)


def test_not_recognised_gives_the_speaker_its_place_in_the_book_or_the_next_free_number():
    book = (SpeakerInfo("S1", "Bob", "#112233"), SpeakerInfo("S2", "Alice", "#445566"),
            SpeakerInfo("S3", "Carol", "#778899"))  # fmt: skip
    assert default_label(book, "S2") == "Speaker 2"  # its own place, not the first other speaker's
    taken = (SpeakerInfo("S1", "Alice", "#112233"), SpeakerInfo("S2", "Speaker 1", "#445566"))
    assert default_label(taken, "S1") == "Speaker 2"  # the next number, not one beyond it
    both = (*taken, SpeakerInfo("S3", "Speaker 2", "#778899"))
    assert default_label(both, "S1") == "Speaker 3"


def test_a_recognised_name_shows_its_similarity_to_two_places():
    assert recognised_text("Alice", 0.9449) == "Recognised as Alice from your known voices (similarity 0.94)"
    assert recognised_short("Alice", 0.9449) == "Recognised as Alice (0.94)"  # the speaker menu's first line


def test_a_speakers_own_speech_is_remembered_under_the_name_given(tmp_path):
    """The real encoder on the demo: Carol's two turns, stored under the name as typed (trimmed)."""
    recording = load_audio(DEMO, SAMPLE_RATE)
    turns = (Utterance(0.7, 3.5, "I'd like to keep this meeting short", "S1"),
             Utterance(4.7, 7.8, "I'll take notes", "S2"), Utterance(30.8, 39.9, "I met a few people", "S2"))
    transcript = Transcript(turns, (Speaker("S1", "Speaker 1"), Speaker("S2", "Speaker 2")), source=str(DEMO))
    library = VoiceLibrary(tmp_path / "voices.db")
    added = remember(library, transcript, "Speaker 2", recording, "  Carol ", VoiceEmbedder())
    [carol] = library.voices()
    assert carol.name == "Carol" and added == len(carol.samples) >= 1
    assert {s.recording for s in carol.samples} == {"meeting.flac"}
    assert all(4.7 <= s.start < s.end <= 39.9 and not 7.8 < s.start < 30.8 for s in carol.samples)


@pytest.mark.parametrize("name", ["", "   "])
def test_a_name_that_cannot_name_a_voice_is_refused_before_any_audio_is_read(tmp_path, name):
    library = VoiceLibrary(tmp_path / "voices.db")
    silence = Recording(np.zeros(16000, np.float32), 16000)
    with pytest.raises(ValueError):
        remember(library, Transcript(utterances=()), "S1", silence, name, embedder=None)  # type: ignore[arg-type]
    assert not (tmp_path / "voices.db").exists()


def test_the_app_uses_the_library_in_the_users_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert user_library().path == library_path(None) and str(tmp_path / "data") in str(user_library().path)
