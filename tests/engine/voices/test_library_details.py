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
    row = (bob, MODEL.name, MODEL.version, MODEL.dim, vector, None, None, None, "now", None, None)
    other.execute(_NEW_SAMPLE, row)
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


# The library as its first version wrote it, before samples kept their audio stream and channel.
FIRST_SCHEMA = (
    "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE, "
    "added TEXT NOT NULL)",
    "CREATE TABLE embeddings (id INTEGER PRIMARY KEY, person INTEGER NOT NULL REFERENCES people(id) "
    "ON DELETE CASCADE, model TEXT NOT NULL, model_version TEXT NOT NULL, dim INTEGER NOT NULL, "
    "vector BLOB NOT NULL, recording TEXT, start REAL, end REAL, added TEXT NOT NULL)",
    "CREATE INDEX embeddings_person ON embeddings(person)",
    "PRAGMA user_version = 1",
)
FIRST_INSERT = (
    "INSERT INTO embeddings (person, model, model_version, dim, vector, recording, start, end, added) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def first_version_library(path: Path) -> None:
    """A library with Bob, as a Murmur that predates the stream and channel columns wrote it."""
    db = sqlite3.connect(path, isolation_level=None)
    for statement in FIRST_SCHEMA:
        db.execute(statement)
    bob = db.execute(_NEW_PERSON, ("Bob", "2026-11-01T10:00:00+00:00")).lastrowid
    vector = sample(2).vector.astype("<f4").tobytes()
    db.execute(
        FIRST_INSERT, (bob, MODEL.name, MODEL.version, MODEL.dim, vector, "old.flac", 2.0, 9.0, "then")
    )
    db.close()


def places(library: VoiceLibrary) -> dict[str, list[tuple[int | None, int | None]]]:
    return {v.name: [(s.stream, s.channel) for s in v.samples] for v in library.voices()}


def test_a_sample_keeps_the_audio_stream_and_channel_it_came_from(tmp_path):
    # catches: the stream or channel not stored, or read back into each other's place
    library = VoiceLibrary(tmp_path / "voices.sqlite")
    vector = sample(1).vector
    library.add("Alice", [VoiceSample(vector, MODEL, "two.mkv", 1.0, 21.0, stream=1, channel=0),
                          VoiceSample(vector, MODEL, "two.mkv", 30.0, 50.0)])  # fmt: skip
    assert places(library) == {"Alice": [(1, 0), (None, None)]}


def test_a_first_version_library_reads_unchanged_and_gains_the_columns_at_its_first_change(tmp_path):
    # catches: an old library refused or changed by a mere read, or its first change losing what it had
    path = tmp_path / "voices.sqlite"
    first_version_library(path)
    before = path.read_bytes()
    path.chmod(0o400)  # read-only, as a library shared from another account may be
    assert places(VoiceLibrary(path)) == {"Bob": [(None, None)]}  # the default stream, the mix
    assert path.read_bytes() == before
    path.chmod(0o600)
    library = VoiceLibrary(path)
    library.add("Alice", [VoiceSample(sample(1).vector, MODEL, "two.mkv", 1.0, 21.0, stream=1, channel=1)])
    assert places(library) == {"Alice": [(1, 1)], "Bob": [(None, None)]}
    assert library.voice("Bob").samples[0].recording == "old.flac"


def test_a_murmur_that_predates_the_columns_still_adds_samples_to_a_library_that_has_them(tmp_path):
    # catches: a new column made NOT NULL, or the library's version raised so older Murmurs refuse it
    library = VoiceLibrary(tmp_path / "voices.sqlite")
    library.add("Alice", [VoiceSample(sample(1).vector, MODEL, "two.mkv", 1.0, 21.0, stream=1, channel=1)])
    older = sqlite3.connect(library.path, isolation_level=None)
    assert older.execute("PRAGMA user_version").fetchone()[0] == 1
    vector = sample(2).vector.astype("<f4").tobytes()
    older.execute(
        FIRST_INSERT, (1, MODEL.name, MODEL.version, MODEL.dim, vector, "old.flac", 2.0, 9.0, "then")
    )
    older.close()
    assert places(library) == {"Alice": [(1, 1), (None, None)]}
