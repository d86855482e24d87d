"""Shared material for the evaluation tests: a one-minute synthetic corpus with one broken recording."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.evaluation.corpus import CorpusConfig, make_corpus
from engine.evaluation.manifest import Manifest, ManifestEntry, read_manifest


@pytest.fixture(scope="session")
def one_minute(tmp_path_factory: pytest.TempPathFactory) -> Manifest:
    """One 1-minute, two-speaker meeting (light noise) and its manifest."""
    folder = tmp_path_factory.mktemp("one-minute")
    config = CorpusConfig(recordings=1, speakers=(2, 2), minutes=(1.0, 1.0), seed=11, snr_db=35.0)
    return read_manifest(make_corpus(config, folder))


@pytest.fixture(scope="session")
def with_broken(one_minute: Manifest, tmp_path_factory: pytest.TempPathFactory) -> Manifest:
    """The one-minute meeting plus a recording whose audio file is not audio at all."""
    good = one_minute.entries[0]
    folder = tmp_path_factory.mktemp("broken")
    audio = folder / "broken.flac"
    audio.write_bytes(b"this is not a FLAC file" * 50)
    stm = Path(shutil.copy(good.stm, folder / "broken.stm"))
    return Manifest("with-broken", (good, ManifestEntry("broken", audio, stm=stm, duration=61.0)))
