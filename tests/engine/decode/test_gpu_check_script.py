"""bench/gpu_check.py: without CUDA it says why and exits cleanly; its dry run runs every check and
every row of the table on the CPU (all but CUDA itself), and the checks pass."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[3] / "bench" / "gpu_check.py"
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


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA: the full check would run")
def test_without_cuda_the_check_skips_with_a_message():
    done = run()
    assert done.returncode == 0
    assert "needs a CUDA GPU" in done.stdout


def test_the_dry_run_passes_every_check_and_prints_the_table():
    done = run("--dry-run", "--steps", "24", "--hf-steps", "8", "--batches", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    verdicts = [line for line in lines if line.startswith(("PASS", "FAIL"))]
    assert len(verdicts) == 3 and all(v.startswith("PASS") for v in verdicts)
    assert lines[: len(verdicts)] == verdicts  # the verdicts come first
    for row in ("HF generate", "murmur graphs (same steps)", "murmur eager", "murmur none", "murmur both"):
        assert row in done.stdout
    assert "/roof" in done.stdout and "argmax agreement 100.0%" in done.stdout
