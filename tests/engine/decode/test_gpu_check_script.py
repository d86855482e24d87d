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


def test_a_policy_row_is_estimated_from_the_captured_steps_and_skipped_only_when_it_cannot_fit():
    # the first device run skipped every 2,700-step row as "about 216 s": the estimate used the
    # slowest step seen (HF's); the captured steps' 5.8 ms made such a row about 17 s
    from gpu_parts import build_model
    from gpu_report import Report
    from gpu_table import Rows

    shape = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                 num_attention_heads=4, num_key_value_heads=2)  # fmt: skip
    model = build_model(shape, torch.device("cpu"), torch.float32)
    rows = Rows(model, None, 16, 4e12, Report(None, budget_s=60))  # type: ignore[arg-type]
    assert rows.whole_chunk(2700) is None  # nothing measured yet: the 45 s guess
    rows.hf_step, rows.graphs = 0.123, (1.0, 0.0058)
    assert rows.whole_chunk(2700) == pytest.approx(1.5 * (1.0 + 2700 * 0.0058) + 10)
    assert rows.fits("murmur none", rows.whole_chunk(2700))
    short = Rows(model, None, 16, 4e12, Report(None, budget_s=30))  # type: ignore[arg-type]
    short.graphs = (1.0, 0.0058)
    assert not short.fits("murmur none", short.whole_chunk(2700))
    assert short.report.data["skipped"] == ["16 murmur none"]
