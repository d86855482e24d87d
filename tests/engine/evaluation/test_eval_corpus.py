"""The synthetic long-form corpus: exact references, a readable manifest, deterministic from a seed."""

from __future__ import annotations

import pytest
import soundfile as sf

from engine.evaluation.corpus import CorpusConfig, make_corpus
from engine.evaluation.manifest import load_reference, read_manifest

CONFIG = CorpusConfig(recordings=2, speakers=(2, 3), minutes=(1.0, 1.3), seed=5, snr_db=30.0)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    return folder, read_manifest(make_corpus(CONFIG, folder))


def test_the_corpus_manifest_lists_every_recording_with_its_references(corpus):
    folder, manifest = corpus
    assert [e.id for e in manifest.entries] == ["meeting-01", "meeting-02"]
    for entry in manifest.entries:
        assert entry.audio.is_file() and entry.stm and entry.rttm and entry.seglst and entry.uem
        assert (folder / f"{entry.id}.words.json").is_file()


def test_recordings_have_the_configured_length_and_speakers(corpus):
    _, manifest = corpus
    for entry in manifest.entries:
        info = sf.info(str(entry.audio))
        assert 60.0 <= info.duration <= 1.3 * 60 * 1.05 and info.samplerate == 16000
        reference = load_reference(entry)
        assert 2 <= len({t.speaker for t in reference.turns}) <= 3
        assert reference.uem == ((0.0, pytest.approx(info.duration, abs=1e-3)),)
        assert all(0 <= s.start < s.end <= info.duration for s in reference.segments)


def test_the_same_seed_gives_the_same_corpus(corpus, tmp_path):
    folder, _ = corpus
    again = CorpusConfig(recordings=1, speakers=(2, 3), minutes=(1.0, 1.3), seed=5, snr_db=30.0)
    make_corpus(again, tmp_path)
    assert (tmp_path / "meeting-01.stm").read_text() == (folder / "meeting-01.stm").read_text()
    first, _ = sf.read(str(folder / "meeting-01.flac"))
    second, _ = sf.read(str(tmp_path / "meeting-01.flac"))
    assert (first == second).all()


def test_another_seed_gives_another_corpus():
    assert CorpusConfig(seed=1).meetings() != CorpusConfig(seed=2).meetings()


@pytest.mark.parametrize(
    "bad",
    [
        {"speakers": (0, 2)},
        {"speakers": (3, 2)},
        {"minutes": (0.5, 2.0)},
        {"recordings": 0},
        {"prefix": "a b"},
    ],
)
def test_invalid_corpus_settings_are_refused(bad):
    with pytest.raises(ValueError):
        CorpusConfig(**bad)
