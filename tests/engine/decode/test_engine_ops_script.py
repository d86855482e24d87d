"""bench/engine_ops.py: the eager decode step stays within its operator budget per layer, a 300 s
chunk at batch 16 needs one CUDA graph per row bucket with the split-KV kernel (SDPA more), and the
profiler prints none of its own messages on the way."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "bench" / "engine_ops.py"


def test_a_decode_step_issues_at_most_14_operators_and_4_gemms_per_layer():
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--dtype", "bfloat16"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ops = int(re.search(r"ops per layer per step: (\d+)", done.stdout).group(1))
    gemms = int(re.search(r"GEMMs per layer: (\d+)", done.stdout).group(1))
    assert ops <= 14 and gemms == 4
    graphs = re.fullmatch(
        r"graphs for a 300 s chunk at batch 16: (\d+) \(split-kv\)", done.stdout.splitlines()[-1]
    )
    assert graphs is not None, done.stdout
    assert int(graphs.group(1)) == 5  # row buckets 1, 2, 4, 8, 16
    assert int(re.search(r"sdpa: (\d+)\n", done.stdout).group(1)) > 5
    assert "split-kv: ops per layer 14 (attention 2)" in done.stdout
    noise = [line for line in done.stderr.splitlines() if "gpuGetDeviceCount" in line or "USDT" in line]
    assert not noise, "the profiler's own chatter reached the terminal:\n" + "\n".join(noise)
