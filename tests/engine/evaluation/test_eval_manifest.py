"""Manifests: JSON and CSV, relative paths, validation, selection, and reading an entry's references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.evaluation.manifest import (
    Manifest,
    ManifestEntry,
    ManifestError,
    load_reference,
    read_manifest,
    write_manifest,
)


def _files(folder: Path) -> ManifestEntry:
    (folder / "audio").mkdir(parents=True)
    (folder / "ref").mkdir()
    (folder / "audio" / "m1.wav").write_bytes(b"")
    (folder / "ref" / "m1.stm").write_text("m1 1 alice 0.0 2.0 Hello there\nm1 1 bob 2.5 3.0 Hi\n")
    (folder / "ref" / "m1.rttm").write_text("SPEAKER m1 1 0.0 2.0 <NA> <NA> alice <NA> <NA>\n")
    (folder / "ref" / "m1.uem").write_text("m1 1 0.0 10.0\n")
    return ManifestEntry(
        "m1",
        folder / "audio" / "m1.wav",
        stm=folder / "ref" / "m1.stm",
        rttm=folder / "ref" / "m1.rttm",
        uem=folder / "ref" / "m1.uem",
        duration=10.0,
    )


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_a_manifest_round_trips_with_relative_paths(tmp_path, suffix):
    entry = _files(tmp_path)
    path = write_manifest(Manifest("tiny", (entry,)), tmp_path / f"manifest{suffix}")
    assert "audio/m1.wav" in path.read_text() and str(tmp_path) not in path.read_text()
    again = read_manifest(path)
    assert again.entries == (entry,)
    assert again.name == ("tiny" if suffix == ".json" else "manifest")


def test_a_hand_written_csv_manifest_is_read(tmp_path):
    _files(tmp_path)
    (tmp_path / "set.csv").write_text("id,audio,stm\nm1,audio/m1.wav,ref/m1.stm\n")
    entry = read_manifest(tmp_path / "set.csv").entries[0]
    assert entry.stm == tmp_path / "ref" / "m1.stm" and entry.rttm is None


def test_load_reference_reads_text_turns_and_uem(tmp_path):
    reference = load_reference(_files(tmp_path))
    assert reference.text == "Hello there Hi"
    assert [t.speaker for t in reference.turns] == ["alice"]
    assert reference.uem == ((0.0, 10.0),) and reference.timed


def test_seglst_is_preferred_over_stm(tmp_path):
    entry = _files(tmp_path)
    seglst = tmp_path / "ref" / "m1.seglst.json"
    seglst.write_text(json.dumps([{"speaker": "a", "words": "from seglst", "start_time": 0, "end_time": 1}]))
    reference = load_reference(ManifestEntry("m1", entry.audio, stm=entry.stm, seglst=seglst))
    assert reference.text == "from seglst"


def test_a_plain_text_reference_is_one_untimed_segment(tmp_path):
    (tmp_path / "t.txt").write_text("Hello\nworld\n")
    reference = load_reference(ManifestEntry("t", tmp_path / "t.wav", text=tmp_path / "t.txt"))
    assert reference.text == "Hello world" and not reference.timed


def test_select_keeps_named_recordings_and_refuses_unknown_ones(tmp_path):
    entries = tuple(ManifestEntry(f"m{i}", tmp_path / "a.wav", text=tmp_path / "t.txt") for i in range(4))
    manifest = Manifest("x", entries)
    assert [e.id for e in manifest.select(["m2", "m0"]).entries] == ["m0", "m2"]
    assert len(manifest.select(limit=3).entries) == 3
    with pytest.raises(ManifestError, match="m9"):
        manifest.select(["m9"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "invalid JSON"),
        ('{"recordings": [{"audio": "a.wav", "stm": "a.stm"}]}', "needs an id and an audio"),
        ('{"recordings": [{"id": "a", "audio": "a.wav"}]}', "no reference"),
        ('{"recordings": [{"id": "a", "audio": "a.wav", "stm": "a.stm", "colour": 1}]}', "unknown field"),
        ('{"recordings": [{"id": "a", "audio": "a", "text": "t"}, {"id": "a", "audio": "b", "text": "t"}]}',
         "repeated"),
        ('{"version": 9, "recordings": []}', "version"),
    ],
)  # fmt: skip
def test_bad_manifests_are_refused_with_the_reason(tmp_path, content, message):
    (tmp_path / "m.json").write_text(content)
    with pytest.raises(ManifestError, match=message):
        read_manifest(tmp_path / "m.json")


def test_a_missing_manifest_names_the_file(tmp_path):
    with pytest.raises(ManifestError, match="cannot read manifest"):
        read_manifest(tmp_path / "nope.json")
