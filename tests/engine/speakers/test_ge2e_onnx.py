"""The GE2E encoder exported to ONNX (written without torch) gives the torch encoder's embeddings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from speaker_sim import DEMO

from engine.errors import ModelLoadError
from engine.speakers.embedding import SpeakerEncoder
from engine.speakers.ge2e_onnx import OnnxEncoder, compare, export, speech_windows


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(tmp_path_factory.mktemp("ge2e") / "ge2e.onnx")


@pytest.fixture(scope="module")
def windows() -> np.ndarray:
    return speech_windows(DEMO.with_suffix(".flac"), limit=200)  # (200, 160, 40) of real speech


def test_onnx_embeddings_of_real_speech_match_the_torch_encoder(exported, windows):
    diff, cosine = compare(exported, windows)
    assert len(windows) == 200
    assert diff < 1e-4 and cosine >= 0.9999, (diff, cosine)


def test_any_batch_size_gives_the_same_embeddings(exported, windows):
    onnx = OnnxEncoder(exported)
    whole = onnx.embed(windows[:40], batch_size=64)
    assert np.allclose(onnx.embed(windows[:40], batch_size=1), whole, atol=1e-5)
    assert np.allclose(onnx.embed(windows[:40], batch_size=7), whole, atol=1e-5)
    assert np.allclose(np.linalg.norm(whole, axis=1), 1.0, atol=1e-5)


def test_an_encoder_given_the_onnx_file_embeds_speech_like_the_default_one(exported, demo):
    pieces = [demo.slice(a, a + 3.0) for a in (1.0, 10.0, 30.0)] + [demo.slice(0, 0.005)]
    onnx = SpeakerEncoder(weights=exported).embed_pieces(pieces)
    default = SpeakerEncoder().embed_pieces(pieces)  # resemblyzer's .pt, rewritten in memory
    assert onnx[-1] is None and default[-1] is None  # too short to embed, either way
    for a, b in zip(onnx[:-1], default[:-1], strict=True):
        assert float(a @ b) >= 0.9999


def test_a_broken_onnx_file_is_a_model_load_error(tmp_path):
    broken = tmp_path / "ge2e.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(ModelLoadError, match="speaker encoder"):
        SpeakerEncoder(weights=broken).embed_mels(np.zeros((1, 160, 40), np.float32))
