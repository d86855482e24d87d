"""The voice library on real SQLite files: what is stored, what deleting leaves behind, and files
that are damaged, foreign, newer or locked by another process."""

from __future__ import annotations

import sqlite3
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from engine.voices import EmbeddingModel, VoiceLibrary, VoiceLibraryError, VoiceSample
from engine.voices.location import default_library_path

MODEL = EmbeddingModel("resemblyzer-ge2e", "1", 8)
OTHER = EmbeddingModel("ecapa", "2", 8)


def sample(seed: int, model: EmbeddingModel = MODEL, start: float = 1.0) -> VoiceSample:
    vector = np.random.default_rng(seed).normal(size=model.dim).astype(np.float32)
    return VoiceSample(vector, model, "monday.flac", start, start + 20.0)


@pytest.fixture
def library(tmp_path) -> VoiceLibrary:
    return VoiceLibrary(tmp_path / "data" / "voices.sqlite", timeout=0.2)


def test_a_voice_comes_back_with_every_sample_its_provenance_and_model(library):
    stored = [sample(1), sample(2, start=30.0)]
    library.add("Alice", stored)
    again = VoiceLibrary(library.path).voice("alice")  # a fresh handle, any letter case
    assert again.name == "Alice" and again.added
    assert [(s.recording, s.start, s.end, s.model) for s in again.samples] == [
        ("monday.flac", 1.0, 21.0, MODEL),
        ("monday.flac", 30.0, 50.0, MODEL),
    ]
    for got, want in zip(again.samples, stored, strict=True):
        np.testing.assert_array_equal(got.vector, want.vector)
        assert got.added


def test_more_samples_of_a_known_person_join_them_whatever_the_letter_case(library):
    library.add("Alice", [sample(1)])
    library.add("ALICE", [sample(2)])
    assert [(v.name, len(v.samples)) for v in library.voices()] == [("Alice", 2)]


def test_nothing_is_written_until_a_voice_is_added(library):
    assert library.voices() == ()
    with pytest.raises(VoiceLibraryError, match="no voice called 'Bob'"):
        library.voice("Bob")
    assert not library.path.parent.exists()


def test_a_new_library_is_readable_by_its_owner_only(library):
    library.add("Alice", [sample(1)])
    assert stat.S_IMODE(library.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(library.path.parent.stat().st_mode) == 0o700


def test_removing_a_voice_deletes_its_embeddings_from_the_file_itself(library):
    alice, bob = sample(1), sample(2)
    library.add("Alice", [alice])
    library.add("Bob", [bob])
    library.remove("alice")
    data = library.path.read_bytes()
    assert alice.vector.astype("<f4").tobytes() not in data and b"Alice" not in data
    assert bob.vector.astype("<f4").tobytes() in data  # the others are kept
    with sqlite3.connect(library.path) as db:
        assert db.execute("SELECT count(*) FROM embeddings").fetchone() == (1,)
    assert [v.name for v in library.voices()] == ["Bob"]


def test_renaming_keeps_the_samples_and_never_takes_another_persons_name(library):
    library.add("Alice", [sample(1)])
    library.add("Bob", [sample(2)])
    library.rename("Alice", "Alicia")
    assert [(v.name, len(v.samples)) for v in library.voices()] == [("Alicia", 1), ("Bob", 1)]
    with pytest.raises(VoiceLibraryError, match="already a voice called 'Bob'; merge"):
        library.rename("alicia", "bob")
    with pytest.raises(VoiceLibraryError, match=f"no voice called 'Carol' in {library.path}$"):
        library.rename("Carol", "Caroline")
    with pytest.raises(VoiceLibraryError, match=f"no voice called 'Carol' in {library.path}$"):
        library.remove(" Carol ")
    assert [v.name for v in library.voices()] == ["Alicia", "Bob"]


def test_merging_moves_every_sample_to_the_target_and_removes_the_source(library):
    library.add("Alice", [sample(1), sample(2)])
    library.add("Al", [sample(3)])
    library.merge("Al", "Alice")
    assert [(v.name, len(v.samples)) for v in library.voices()] == [("Alice", 3)]
    with pytest.raises(VoiceLibraryError, match="same voice"):
        library.merge("Alice", "alice")
    for source, target in (("Bob", "Alice"), ("Alice", "Bob")):
        with pytest.raises(VoiceLibraryError, match=f"no voice called 'Bob' in {library.path}$"):
            library.merge(source, target)
    assert [(v.name, len(v.samples)) for v in library.voices()] == [("Alice", 3)]


def test_samples_of_another_embedding_model_are_refused_with_both_models_named(library):
    library.add("Alice", [sample(1)])
    with pytest.raises(VoiceLibraryError, match=r"stored with the speaker model resemblyzer-ge2e 1; "
                       r"embeddings of ecapa 2 cannot be compared"):  # fmt: skip
        library.add("Alice", [sample(2, OTHER)])
    third = EmbeddingModel("wavlm", "1", 8)
    with pytest.raises(VoiceLibraryError, match=r"embeddings of ecapa 2, wavlm 1 cannot be compared"):
        library.add("Alice", [sample(2, OTHER), sample(4, third)])
    library.add("Bob", [sample(3, OTHER)])
    with pytest.raises(VoiceLibraryError, match=r"^Alice's voice was stored with .* Remove Alice and add"):
        library.merge("Bob", "Alice")
    assert [(v.name, len(v.samples)) for v in library.voices()] == [("Alice", 1), ("Bob", 1)]


@pytest.mark.parametrize("name", ["", "   ", "Speaker 3", "speaker12", "a\tb", "x" * 101])
def test_names_a_user_could_not_tell_from_a_default_label_are_refused(library, name):
    with pytest.raises(ValueError):
        library.add(name, [sample(1)])
    assert not library.path.exists()


def test_a_damaged_file_gives_a_clear_error_and_is_left_as_it_was(library):
    library.path.parent.mkdir()
    junk = bytes(range(256)) * 20
    library.path.write_bytes(junk)
    message = (
        f"{library.path} is not a readable voice library (damaged, or another kind of file); it was left "
        "as it is: move it aside to start a new library, or use --voices PATH for another"
    )
    for attempt in (library.voices, lambda: library.add("Alice", [sample(1)]), lambda: library.remove("x")):
        with pytest.raises(VoiceLibraryError) as refused:
            attempt()
        assert str(refused.value) == message
    assert library.path.read_bytes() == junk


def test_a_library_damaged_inside_keeps_its_bytes_when_a_change_is_refused(library):
    library.add("Alice", [sample(1)])
    data = bytearray(library.path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page
    library.path.write_bytes(bytes(data))
    with pytest.raises(VoiceLibraryError, match="is not a readable voice library"):
        library.add("Bob", [sample(2)])
    assert library.path.read_bytes() == bytes(data)


def test_a_library_that_cannot_be_opened_says_where_and_why(library):
    library.path.mkdir(parents=True)  # a folder where the file should be
    with pytest.raises(VoiceLibraryError, match=f"^cannot use the voice library {library.path}: .+"):
        library.add("Alice", [sample(1)])


def test_another_programs_database_is_not_taken_for_a_library(library):
    library.path.parent.mkdir()
    with sqlite3.connect(library.path) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.execute("INSERT INTO notes VALUES ('keep me')")
    before = library.path.read_bytes()
    with pytest.raises(VoiceLibraryError, match="is not a Murmur voice library"):
        library.add("Alice", [sample(1)])
    assert library.path.read_bytes() == before


def test_a_library_from_a_newer_murmur_is_refused_untouched(library):
    library.add("Alice", [sample(1)])
    with sqlite3.connect(library.path) as db:
        db.execute("PRAGMA user_version = 2")
    before = library.path.read_bytes()
    with pytest.raises(VoiceLibraryError, match="newer Murmur"):
        library.voices()
    assert library.path.read_bytes() == before


def test_a_library_another_process_holds_locked_fails_clearly_and_loses_nothing(library):
    library.add("Alice", [sample(1)])
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sqlite3, sys
            db = sqlite3.connect({str(library.path)!r}, isolation_level=None)
            db.execute("BEGIN EXCLUSIVE")
            print("locked", flush=True)
            sys.stdin.readline()
            db.execute("ROLLBACK")
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(VoiceLibraryError) as refused:
            library.add("Bob", [sample(2)])
        assert str(refused.value) == (
            f"the voice library {library.path} is in use by another program; try again when it is done "
            "(nothing was changed)"
        )
        with pytest.raises(VoiceLibraryError, match="in use by another program"):
            library.voices()
    finally:
        holder.communicate("\n", timeout=30)
    assert [(v.name, len(v.samples)) for v in library.voices()] == [("Alice", 1)]
    library.add("Bob", [sample(2)])  # and it works once the other program is done
    assert [v.name for v in library.voices()] == ["Alice", "Bob"]


def test_the_default_library_lives_in_the_users_data_folder():
    assert (
        str(default_library_path({"XDG_DATA_HOME": "/d", "HOME": "/h"}, "linux")) == "/d/murmur/voices.sqlite"
    )
    assert str(default_library_path({"HOME": "/h"}, "linux")) == "/h/.local/share/murmur/voices.sqlite"
    assert str(default_library_path({"XDG_DATA_HOME": "rel", "HOME": "/h"}, "linux")).startswith("/h/.local")
    mac = default_library_path({"HOME": "/h"}, "darwin")
    assert str(mac) == "/h/Library/Application Support/murmur/voices.sqlite"
    assert str(default_library_path({"APPDATA": "C:/A", "HOME": "/h"}, "win32")).startswith("C:/A/murmur")
    windows = default_library_path({"HOME": "/h"}, "win32")
    assert str(windows) == "/h/AppData/Roaming/murmur/voices.sqlite"
