"""The voice library's finer promises on real SQLite files: reading while another program writes,
two programs making the first library at once, folders made on the way, UTC stamps, and the exact
words of what it refuses."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from engine.voices import EmbeddingModel, VoiceLibrary, VoiceLibraryError, VoiceSample
from engine.voices.library import _NEW_PERSON, _NEW_SAMPLE, _SCHEMA

MODEL = EmbeddingModel("resemblyzer-ge2e", "1", 8)
OTHER = EmbeddingModel("ecapa", "2", 8)
DAMAGED = "is not a readable voice library (damaged, or another kind of file); it was left as it is"


def sample(seed: int, model: EmbeddingModel = MODEL) -> VoiceSample:
    vector = np.random.default_rng(seed).normal(size=model.dim).astype(np.float32)
    return VoiceSample(vector, model, "monday.flac", 1.0, 21.0)


def open_files(path: Path) -> int:
    """How many of this process's open files are `path`."""
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == str(path.resolve()))


def test_a_library_that_never_waits_for_a_lock_is_allowed_and_a_negative_wait_is_refused(tmp_path):
    library = VoiceLibrary(tmp_path / "voices.sqlite", timeout=0)
    library.add("Alice", [sample(1)])
    assert [v.name for v in library.voices()] == ["Alice"]
    with pytest.raises(ValueError) as refused:
        VoiceLibrary(tmp_path / "voices.sqlite", timeout=-0.5)
    assert str(refused.value) == "the lock timeout cannot be negative, got -0.5"


def test_a_library_another_program_is_changing_can_still_be_read_as_it_was(tmp_path):
    library = VoiceLibrary(tmp_path / "voices.sqlite", timeout=0)
    library.add("Alice", [sample(1)])
    writer = sqlite3.connect(library.path, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # another program's change, not committed yet
        writer.execute(_NEW_PERSON, ("Bob", "2026-12-04T10:00:00+00:00"))
        assert [v.name for v in library.voices()] == ["Alice"]  # a read takes no write lock
    finally:
        writer.close()


def test_two_programs_adding_the_first_voices_at_once_both_keep_them(tmp_path):
    path = tmp_path / "voices.sqlite"
    other = sqlite3.connect(path, isolation_level=None)  # another Murmur, making the library first
    other.execute("BEGIN IMMEDIATE")
    for statement in _SCHEMA:
        other.execute(statement)
    bob = other.execute(_NEW_PERSON, ("Bob", "2026-12-04T10:00:00+00:00")).lastrowid
    vector = sample(2).vector.astype("<f4").tobytes()
    other.execute(_NEW_SAMPLE, (bob, MODEL.name, MODEL.version, MODEL.dim, vector, None, None, None, "now"))
    assert path.stat().st_size == 0  # nothing committed: this library finds an empty file
    failed: list[BaseException] = []

    def add_alice() -> None:
        try:
            VoiceLibrary(path, timeout=60).add("Alice", [sample(1)])
        except BaseException as exc:  # handed to the test's thread
            failed.append(exc)

    adding = threading.Thread(target=add_alice)
    adding.start()
    deadline = time.monotonic() + 60
    while open_files(path) < 2 and adding.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)  # until this library has the file open, waiting for the other's lock
    other.execute("COMMIT")
    other.close()
    adding.join(60)
    assert failed == []
    assert [(v.name, len(v.samples)) for v in VoiceLibrary(path).voices()] == [("Alice", 1), ("Bob", 1)]


def test_a_library_two_folders_down_a_path_not_made_yet_is_made_with_its_folders(tmp_path):
    library = VoiceLibrary(tmp_path / "home" / "share" / "murmur" / "voices.sqlite")
    library.add("Alice", [sample(1)])
    assert [v.name for v in VoiceLibrary(library.path).voices()] == ["Alice"]


def test_voices_and_samples_are_stamped_in_utc_to_the_second(tmp_path):
    library = VoiceLibrary(tmp_path / "voices.sqlite")
    before = datetime.now(UTC).replace(microsecond=0)
    alice = library.add("Alice", [sample(1)])
    after = datetime.now(UTC)
    for stamp in (alice.added, alice.samples[0].added):
        when = datetime.fromisoformat(stamp)
        assert stamp.endswith("+00:00") and when.utcoffset().total_seconds() == 0
        assert before <= when <= after and when.microsecond == 0


def test_a_library_with_a_damaged_embedding_says_it_is_damaged(tmp_path):
    library = VoiceLibrary(tmp_path / "voices.sqlite")
    library.add("Alice", [sample(1)])
    with sqlite3.connect(library.path) as db:
        db.execute("UPDATE embeddings SET vector = substr(vector, 1, 12)")  # 3 of its 8 values
    with pytest.raises(VoiceLibraryError) as refused:
        library.voices()
    assert str(refused.value).startswith(f"{library.path} {DAMAGED}")


def test_another_database_of_the_same_version_number_is_not_taken_for_a_library(tmp_path):
    path = tmp_path / "voices.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT)")  # no embeddings table
        db.execute("PRAGMA user_version = 1")
    with pytest.raises(VoiceLibraryError) as refused:
        VoiceLibrary(path).voices()
    assert str(refused.value) == f"{path} is not a Murmur voice library; it was left as it is"


def test_storing_nothing_is_refused_naming_the_person(tmp_path):
    library = VoiceLibrary(tmp_path / "voices.sqlite")
    with pytest.raises(ValueError) as refused:
        library.add(" Alice ", [])
    assert str(refused.value) == "no voice samples to store for Alice"
    assert not library.exists()


def test_another_models_samples_are_refused_naming_the_person_as_stored(tmp_path):
    library = VoiceLibrary(tmp_path / "voices.sqlite")
    library.add("Alice", [sample(1)])
    with pytest.raises(VoiceLibraryError) as refused:
        library.add("ALICE", [sample(2, OTHER)])
    assert str(refused.value) == (
        "Alice's voice was stored with the speaker model resemblyzer-ge2e 1; embeddings of ecapa 2 cannot "
        "be compared with it. Remove Alice and add the voice again, or store it under another name"
    )


def test_a_name_in_other_capitals_is_the_same_person_in_any_alphabet(tmp_path):
    library = VoiceLibrary(tmp_path / "voices.sqlite")
    library.add("Zoë", [sample(1)])
    library.add("ZOË", [sample(2)])  # more of Zoë, not a second person
    library.add("Élodie", [sample(3)])
    assert [(v.name, len(v.samples)) for v in library.voices()] == [("Zoë", 2), ("Élodie", 1)]
    with pytest.raises(VoiceLibraryError, match=r"^there is already a voice called 'Élodie'; merge"):
        library.rename("zoë", "ÉLODIE")
    library.rename("zoë", "ZOË")  # her own name in capitals
    library.merge("élodie", "zoë")
    assert [(v.name, len(v.samples)) for v in library.voices()] == [("ZOË", 3)]
    library.remove("zoë")
    assert library.voices() == ()
