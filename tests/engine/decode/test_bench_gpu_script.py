"""bench/engine_gpu.py: without CUDA it says why and exits cleanly; its dry run works anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[3] / "bench" / "engine_gpu.py"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        check=False,
    )


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA: the full benchmark would run")
def test_without_cuda_the_benchmark_skips_with_a_message():
    done = run()
    assert done.returncode == 0
    assert "needs a CUDA GPU" in done.stdout


def test_the_dry_run_prints_every_row_and_the_equivalence_check():
    done = run("--dry-run", "--steps", "24", "--hf-steps", "8", "--batches", "2")
    assert done.returncode == 0, done.stderr
    for row in ("HF generate", "murmur none", "murmur output", "murmur speech", "murmur both", "/roof"):
        assert row in done.stdout
    assert "8/8 tokens agree" in done.stdout
