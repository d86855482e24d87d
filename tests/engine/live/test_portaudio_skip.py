"""Where no PulseAudio server can run, the PortAudio recording tests skip and say why.

The PortAudio tests run in a pytest subprocess whose PATH lacks the server's programs, or holds a
`pulseaudio` that exits at once with an error (as one that may not run on a machine does).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TESTS = "tests/engine/live/test_portaudio_capture.py"


def _pytest_with_path(bin_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": str(bin_dir), "HF_HUB_OFFLINE": "1", "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", TESTS],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=180)  # fmt: skip


def _link(bin_dir: Path, *tools: str) -> None:
    for tool in tools:
        real = shutil.which(tool)
        if real is None:
            pytest.skip(f"{tool} is not installed")
        (bin_dir / tool).symlink_to(real)


@pytest.mark.parametrize(("present", "missing"), [((), "pulseaudio, paplay, pactl"),
                                                  (("pulseaudio", "paplay"), "pactl")])  # fmt: skip
def test_without_the_server_installed_the_portaudio_tests_skip_with_the_reason(
    tmp_path: Path, present: tuple[str, ...], missing: str
) -> None:
    _link(tmp_path, *present)
    proc = _pytest_with_path(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 skipped" in proc.stdout
    assert f"no PulseAudio server installed ({missing} missing" in proc.stdout


def test_a_server_that_will_not_start_skips_them_with_its_error(tmp_path: Path) -> None:
    _link(tmp_path, "paplay", "pactl")
    server = tmp_path / "pulseaudio"
    server.write_text("#!/bin/sh\necho 'E: [pulseaudio] main.c: Daemon startup failed.' >&2\nexit 1\n")
    server.chmod(0o755)
    proc = _pytest_with_path(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 skipped" in proc.stdout
    assert "the PulseAudio server did not start: E: [pulseaudio] main.c: Daemon startup failed." in \
        proc.stdout
