"""What the Known Voices window lists and the labels around it, without a window: a row per
person in name order, the sample count worded for one or many, the date a person was added, the
"Speaker N" a wrongly recognised speaker goes back to, and a name refused before any audio is
embedded."""

from __future__ import annotations

import numpy as np
import pytest

from app.known_voices import VoiceRow, default_label, recognised_text, remember, rows
from app.speakers import SpeakerInfo
from engine.types import Recording, Transcript
from engine.voices import VoiceLibrary
from engine.voices.samples import EmbeddingModel, VoiceSample

MODEL = EmbeddingModel("resemblyzer-ge2e", "1", 4)


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
    book = (SpeakerInfo("S1", "Speaker 1", "#112233"), SpeakerInfo("S2", "Alice", "#445566"),
            SpeakerInfo("S3", "Speaker 3", "#778899"))  # fmt: skip
    assert default_label(book, "S2") == "Speaker 2"
    taken = (SpeakerInfo("S1", "Alice", "#112233"), SpeakerInfo("S2", "Speaker 1", "#445566"),
             SpeakerInfo("S3", "Speaker 2", "#778899"))  # fmt: skip
    assert default_label(taken, "S1") == "Speaker 3"  # 1 and 2 are taken by the others


def test_a_recognised_name_shows_its_similarity_to_two_places():
    assert recognised_text("Alice", 0.9449) == "Recognised as Alice from your known voices (similarity 0.94)"


@pytest.mark.parametrize("name", ["", "   "])
def test_a_name_that_cannot_name_a_voice_is_refused_before_any_audio_is_read(tmp_path, name):
    library = VoiceLibrary(tmp_path / "voices.db")
    silence = Recording(np.zeros(16000, np.float32), 16000)
    with pytest.raises(ValueError):
        remember(library, Transcript(utterances=()), "S1", silence, name, embedder=None)  # type: ignore[arg-type]
    assert not (tmp_path / "voices.db").exists()
