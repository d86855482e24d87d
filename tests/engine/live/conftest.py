"""Clips of the demo meeting for the live tests, its reference words, and a small disk."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import soundfile as sf

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "resources" / "demo" / "meeting.flac"
STM = ROOT / "resources" / "demo" / "meeting.stm"


def write_clip(path: Path, start: float, end: float) -> Path:
    """Seconds [start, end) of the demo meeting as a 16 kHz FLAC or WAV (by `path`'s suffix)."""
    samples, rate = sf.read(DEMO, dtype="float32", start=int(start * 16000), stop=int(end * 16000))
    sf.write(path, samples, rate)
    return path


def reference_text(start: float, end: float) -> str:
    """The demo's reference words of the turns that lie within [start, end)."""
    words = []
    for line in STM.read_text().splitlines():
        parts = line.split(maxsplit=5)
        if float(parts[3]) >= start and float(parts[4]) <= end:
            words.append(parts[5])
    return " ".join(words)


@pytest.fixture
def clip(tmp_path: Path) -> Path:
    """The demo's first 26 s (six turns, four speakers) as FLAC."""
    return write_clip(tmp_path / "clip.flac", 0.0, 26.0)


@contextmanager
def small_tmpfs(folder: Path, size: str = "256k") -> Iterator[Path]:
    """`folder` as a tmpfs of `size` (a disk that fills quickly); skips where it cannot be mounted
    (not root, or no permission to mount)."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a small tmpfs needs root and mount")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True, text=True)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)
