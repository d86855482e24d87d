"""Fixtures: tiny VibeVoice-ASR checkpoints the tests build themselves (no hub, no download).

`random_checkpoint` is a random-weight checkpoint of the real architecture at toy size, saved with
`save_pretrained`; `loaded` is it loaded back through the backend's own loading code. Its text
model is initialised wide (0.2) so greedy choices are not near-ties. `trained_model` is the tiny
model trained to reply with its clips' references, built once per machine under .cache/murmur/.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.backends.vibevoice.config import VibeVoiceConfig
from engine.testing.tiny import TinyShape, read_clips, save_tiny_checkpoint, tiny_trained_model
from engine.types import Segment

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def random_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_checkpoint(tmp_path_factory.mktemp("vibevoice-random"), TinyShape(text_init=0.2), seed=1)


@pytest.fixture(scope="session")
def loaded(random_checkpoint: Path):
    from engine.backends.vibevoice.loading import load_model

    return load_model(VibeVoiceConfig(model=str(random_checkpoint), device="cpu"))


@pytest.fixture(scope="session")
def trained_model() -> Path:
    return tiny_trained_model()


@pytest.fixture(scope="session")
def trained_clips(trained_model: Path) -> list[tuple[Path, tuple[Segment, ...]]]:
    return read_clips(trained_model)
