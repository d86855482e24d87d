"""The default path (silero VAD, whisper, GE2E speakers on onnxruntime) runs where torch is not
installed, as in the desktop app's default bundle; VibeVoice then fails with a clear message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.speakers.ge2e_onnx import export

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "resources" / "demo" / "meeting.flac"
ABSENT = ("torch", "torchaudio", "transformers", "pyannote", "librosa", "numba")

# Runs the CLI with the packages above made uninstallable, the exported encoder placed where a
# bundle ships it, and prints which of them got imported.
SCRIPT = f"""
import sys
from pathlib import Path

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {ABSENT!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)

sys.meta_path.insert(0, Absent())
import engine.speakers.onnx_encoder as ge2e
ge2e.bundled_model = lambda: Path(sys.argv[1])
from engine.cli import main
code = main(sys.argv[2:])
print("imported:", sorted({{m.split(".")[0] for m in sys.modules}} & set({ABSENT!r})))
sys.exit(code)
"""


@pytest.fixture(scope="module")
def encoder_onnx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(tmp_path_factory.mktemp("ge2e") / "ge2e.onnx")


def run_without_torch(encoder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(encoder), *args],
        capture_output=True, text=True, env=env, timeout=300, cwd=ROOT,
    )  # fmt: skip


def test_the_demo_is_transcribed_with_speakers_without_torch(encoder_onnx, tmp_path):
    done = run_without_torch(
        encoder_onnx, "transcribe", str(DEMO), "--out", str(tmp_path), "--format", "json", "-q"
    )
    assert done.returncode == 0, done.stderr
    assert "imported: []" in done.stdout
    transcript = json.loads((tmp_path / "meeting.json").read_text())
    words = " ".join(u["text"] for u in transcript["utterances"]).lower()
    assert "meeting short" in words and len(words.split()) > 250
    assert len({u["speaker"] for u in transcript["utterances"]}) >= 3  # the demo has four voices


def test_vibevoice_without_torch_says_what_is_missing(encoder_onnx, tmp_path):
    done = run_without_torch(
        encoder_onnx, "transcribe", str(DEMO), "--backend", "vibevoice", "--out", str(tmp_path)
    )
    assert done.returncode == 1
    assert "VibeVoice backend needs torch" in done.stderr
    assert not list(tmp_path.iterdir())
