"""bench/gpu_check.py: without CUDA it says why and exits cleanly; its dry run (plain interpreter,
any working directory, no PYTHONPATH) runs every check and every row of the table on the CPU, prints
each verdict before the table and records verdicts and rows in `--out` as it goes; `--budget-s`
skips the rows that do not fit, keeps the verdicts, and fails the run when the largest batch's rows
were not reached."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[3] / "bench" / "gpu_check.py"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {
    "HF_HUB_OFFLINE": "1",
    "OMP_NUM_THREADS": "1",
}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=cwd,
        timeout=300,
        check=False,
    )


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA: the full check would run")
def test_without_cuda_the_check_skips_with_a_message():
    done = run()
    assert done.returncode == 0
    assert "needs a CUDA GPU" in done.stdout


def test_the_dry_run_passes_every_check_and_records_them_as_it_goes(tmp_path):
    out = tmp_path / "out"
    done = run(
        "--dry-run", "--steps", "24", "--hf-steps", "8", "--batches", "2", "--out", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("python ") and " torch " in lines[0] and " transformers " in lines[0]
    verdicts = [line for line in lines if line.startswith(("PASS", "FAIL"))]
    assert len(verdicts) == 5 and all(v.startswith("PASS") for v in verdicts)
    assert "store grew" in done.stdout and "one step off" in done.stdout
    assert lines.index(verdicts[-2]) < next(i for i, line in enumerate(lines) if line.startswith("batch"))
    assert verdicts[-1].startswith("PASS batch 2 rows reached")
    for row in ("HF generate", "murmur graphs (same steps)", "murmur eager", "murmur none", "murmur both"):
        assert row in done.stdout
    assert "/roof" in done.stdout and "argmax agreement 100.0%" in done.stdout
    assert "attention backend sdpa; kernels seen" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["done"] and summary["ok"]
    assert [c["verdict"] for c in summary["checks"]].count("PASS") == 5
    assert len(summary["rows"]) == 5 and summary["environment"]["torch"].startswith(torch.__version__)
    assert "murmur none" in (out / "table.txt").read_text()


def test_a_budget_too_short_for_the_largest_batch_keeps_the_verdicts_and_fails_the_run(tmp_path):
    out = tmp_path / "out"
    done = run("--dry-run", "--batches", "2", "--budget-s", "1", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "SKIP row 2 HF generate" in done.stdout and "FAIL batch 2 rows reached" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rows"] == [] and len(summary["skipped"]) == 5
    assert [c["verdict"] for c in summary["checks"]].count("PASS") == 4
