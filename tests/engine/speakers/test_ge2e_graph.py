"""resemblyzer's weights become an ONNX encoder without torch: same tensors, same embeddings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.errors import ModelLoadError
from engine.speakers.embedding import resemblyzer_weights
from engine.speakers.ge2e_graph import read_weights

ROOT = Path(__file__).resolve().parents[3]


def test_the_weights_read_without_torch_are_the_ones_torch_loads():
    import torch

    ours = read_weights(resemblyzer_weights())
    reference = torch.load(resemblyzer_weights(), map_location="cpu", weights_only=True)["model_state"]
    assert set(ours) == set(reference)
    for name, tensor in reference.items():
        np.testing.assert_array_equal(ours[name], tensor.numpy(), err_msg=name)


def test_the_default_encoder_embeds_speech_without_importing_torch():
    script = (
        "import sys, numpy as np\n"
        "from engine.speakers.embedding import SpeakerEncoder\n"
        "tone = np.sin(np.arange(48000) * 0.05).astype(np.float32) * 0.1\n"
        "vec = SpeakerEncoder().embed_audio(tone)\n"
        "print(vec.shape, round(float(np.linalg.norm(vec)), 4), 'torch' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["(256,)", "1.0", "False"]


def test_truncated_weights_are_a_model_load_error(tmp_path):
    broken = tmp_path / "pretrained.pt"
    broken.write_bytes(resemblyzer_weights().read_bytes()[:100_000])
    with pytest.raises(ModelLoadError, match="speaker encoder"):
        read_weights(broken)
