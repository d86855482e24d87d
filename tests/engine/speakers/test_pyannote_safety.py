"""Loading a pyannote pipeline leaves pyannote's usage telemetry off unless the user opted in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import os, sys
from engine.errors import ModelLoadError
from engine.speakers.pyannote import PyannoteConfig, load_pipeline
try:
    load_pipeline(PyannoteConfig(pipeline=sys.argv[1], device="cpu"))
except ModelLoadError:
    pass
from pyannote.audio.telemetry.metrics import is_metrics_enabled
print(is_metrics_enabled())
"""


def telemetry_after_loading(tmp_path: Path, chosen: str | None) -> str:
    folder = tmp_path / "pipeline"
    folder.mkdir(exist_ok=True)
    (folder / "config.yaml").write_text("pipeline: {name: no.such.Pipeline}\n")
    env = {k: v for k, v in os.environ.items() if k != "PYANNOTE_METRICS_ENABLED"}
    env |= {"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    if chosen is not None:
        env["PYANNOTE_METRICS_ENABLED"] = chosen
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(folder)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_pyannote_telemetry_is_off_by_default_and_an_opt_in_is_kept(tmp_path):
    assert telemetry_after_loading(tmp_path, None) == "False"
    assert telemetry_after_loading(tmp_path, "1") == "True"
