"""Files with more than one audio stream, built by tests from files they wrote (needs `ffmpeg`)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path


def mux_audio(inputs: Sequence[Path], path: Path, codec: str = "flac") -> Path:
    """`path` (its container from the suffix) holding the audio of each input as its own stream,
    in order: stream 0 is the first input's (the default one)."""
    sources = [arg for p in inputs for arg in ("-i", str(p))]
    maps = [arg for i in range(len(inputs)) for arg in ("-map", f"{i}:a")]
    command = ["ffmpeg", "-y", "-v", "error", *sources, *maps, "-c:a", codec, str(path)]
    subprocess.run(command, check=True, timeout=60)
    return path
