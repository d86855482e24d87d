"""`--backend vibevoice` without its checkpoint and without a reachable hub fails at once, with the
working download command (`hf download`), before any audio is decoded. How long it takes (no hub
retries: they took 32 s) is measured by `bench/failure_times.py`, not asserted here."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[3]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_hub_is_one_line_at_once_with_the_hf_download_command(tmp_path: Path):
    audio = tmp_path / "talk.wav"
    sf.write(audio, np.zeros(16000, dtype=np.float32), 16000)
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    env |= {
        "PYTHONPATH": str(ROOT),
        "HF_HOME": str(tmp_path / "hf"),
        "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}",
    }
    done = subprocess.run(
        [sys.executable, "-m", "engine", "transcribe", str(audio), "--backend", "vibevoice", "-q"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1
    assert len(lines) == 1, done.stderr
    assert "the hub cannot be reached" in lines[0]
    assert "`hf download microsoft/VibeVoice-ASR-HF --local-dir ~/models/VibeVoice-ASR-HF`" in lines[0]
