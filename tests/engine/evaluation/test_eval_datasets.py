"""Dataset readers on fake folder trees laid out like the real downloads (nothing is downloaded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.evaluation.datasets import DATASETS, read_dataset
from engine.evaluation.datasets.ami import TEST_MEETINGS, read_ami
from engine.evaluation.datasets.earnings import read_earnings21
from engine.evaluation.datasets.tedlium import read_tedlium
from engine.evaluation.manifest import ManifestError, load_reference


def touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def ami_tree(root: Path, meetings: tuple[str, ...] = TEST_MEETINGS) -> None:
    """amicorpus/<id>/audio/<id>.{Mix-Headset,Array1-01}.wav + AMI-diarization-setup references."""
    for m in meetings:
        touch(root / "amicorpus" / m / "audio" / f"{m}.Mix-Headset.wav")
        touch(root / "amicorpus" / m / "audio" / f"{m}.Array1-01.wav")
        setup = root / "AMI-diarization-setup"
        touch(
            setup / "only_words" / "rttms" / "test" / f"{m}.rttm",
            f"SPEAKER {m} 1 0 1 <NA> <NA> A <NA> <NA>\n",
        )
        touch(setup / "word_and_vocalsounds" / "rttms" / "test" / f"{m}.rttm")
        touch(setup / "uems" / "test" / f"{m}.uem", f"{m} 1 0.0 100.0\n")
        touch(root / "stm" / f"{m}.stm", f"{m} 1 A 0.0 1.0 hello\n")


def test_ami_ihm_finds_all_16_test_meetings_in_the_download_layout(tmp_path):
    ami_tree(tmp_path)
    manifest = read_dataset("ami-ihm", tmp_path)
    assert [e.id for e in manifest.entries] == list(TEST_MEETINGS)
    first = manifest.entries[0]
    assert first.audio.name == "EN2002a.Mix-Headset.wav"
    assert "only_words" in first.rttm.parts and first.uem is not None and first.stm is not None
    assert load_reference(first).text == "hello"


def test_ami_sdm_takes_the_first_array_channel(tmp_path):
    ami_tree(tmp_path)
    assert read_dataset("ami-sdm", tmp_path).entries[0].audio.name == "EN2002a.Array1-01.wav"


def test_ami_flat_layout_with_one_folder_per_microphone(tmp_path):
    for m in TEST_MEETINGS:
        touch(tmp_path / "wav" / "ihm" / f"{m}.flac")
        touch(tmp_path / "wav" / "sdm" / f"{m}.flac")
        touch(tmp_path / "ref" / f"{m}.seglst.json", "[]")
    entries = read_ami(tmp_path, "sdm").entries
    assert len(entries) == 16 and entries[5].audio == tmp_path / "wav" / "sdm" / f"{TEST_MEETINGS[5]}.flac"


def test_ami_names_missing_meetings_unless_allowed(tmp_path):
    ami_tree(tmp_path, TEST_MEETINGS[:14])
    with pytest.raises(ManifestError, match=r"2 recording.*TS3003c, TS3003d"):
        read_dataset("ami-ihm", tmp_path)
    assert len(read_dataset("ami-ihm", tmp_path, allow_missing=True).entries) == 14


def test_tedlium_release_layout_prefers_legacy_and_the_test_split(tmp_path):
    base = tmp_path / "TEDLIUM_release-3"
    for part in ("legacy", "speaker-adaptation"):
        for split, talks in (
            ("test", ("AimeeMullins_2009P", "BillGates_2010")),
            ("dev", ("DanBarber_2010",)),
        ):
            for talk in talks:
                touch(base / part / split / "sph" / f"{talk}.sph")
                touch(base / part / split / "stm" / f"{talk}.stm", f"{talk} 1 S 0 1 <o,f0,male> hi\n")
    manifest = read_tedlium(tmp_path)
    assert [e.id for e in manifest.entries] == ["AimeeMullins_2009P", "BillGates_2010"]
    assert all("legacy" in e.audio.parts and "legacy" in e.stm.parts for e in manifest.entries)


def test_tedlium_flat_folder_with_text_references(tmp_path):
    touch(tmp_path / "talk1.wav")
    touch(tmp_path / "talk1.txt", "hello world")
    entry = read_tedlium(tmp_path).entries[0]
    assert entry.text is not None and load_reference(entry).text == "hello world"


NLP = "token|speaker|ts|endTs|punctuation|case|tags|wer_tags\nGood|0||||UC|[]|[]\nmorning|1||||LC|[]|[]\n"


def earnings_tree(root: Path, calls: tuple[str, ...]) -> None:
    for call in calls:
        touch(root / "earnings21" / "media" / f"{call}.mp3")
        touch(root / "earnings21" / "transcripts" / "nlp_references" / f"{call}.nlp", NLP)
    touch(root / "earnings21" / "eval10-file-metadata.csv", "file_id,audio_length\n4320211,3285.8\n")


def test_earnings21_pairs_media_with_nlp_references(tmp_path):
    earnings_tree(tmp_path, ("4320211", "4330115"))
    manifest = read_earnings21(tmp_path)
    assert [e.id for e in manifest.entries] == ["4320211", "4330115"]
    reference = load_reference(manifest.entries[0])
    assert [s.speaker for s in reference.segments] == ["0", "1"] and not reference.timed


def test_earnings21_eval10_subset_follows_revs_listing(tmp_path):
    earnings_tree(tmp_path, ("4320211", "4330115"))
    assert [e.id for e in read_dataset("earnings21-eval10", tmp_path).entries] == ["4320211"]


def test_folder_pairs_any_audio_with_references_of_the_same_name(tmp_path):
    touch(tmp_path / "a" / "x.flac")
    touch(tmp_path / "a" / "x.stm", "x 1 A 0 1 hi\n")
    touch(tmp_path / "a" / "x.words.json", "[]")
    touch(tmp_path / "y.wav")
    manifest = read_dataset("folder", tmp_path, allow_missing=True)
    assert [e.id for e in manifest.entries] == ["x"] and manifest.entries[0].seglst is None


def test_unknown_dataset_and_empty_folder_are_refused(tmp_path):
    with pytest.raises(ValueError, match=", ".join(DATASETS)):
        read_dataset("librispeech", tmp_path)
    with pytest.raises(ManifestError, match="no recording"):
        read_dataset("folder", tmp_path, allow_missing=True)
    with pytest.raises(ManifestError, match="not a folder"):
        read_dataset("tedlium", tmp_path / "missing")
