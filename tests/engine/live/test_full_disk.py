"""A disk that fills while `murmur record` writes: one clear message, and the audio before it kept.

Two ways to run out of room, both on a real `murmur record` process: a file-size limit
(`RLIMIT_FSIZE`, works for any user: writes fail with EFBIG) and a real full file system (a small
tmpfs, mounted only where the tests run as root and may mount; ENOSPC). With the limit the file is
made clean at once; on the full tmpfs it cannot be rewritten, so it stays marked for recovery, and
`murmur record --recover` makes it whole once space is freed.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import av
import numpy as np
import pytest
import soundfile as sf

from engine.live.recovery import find_partial
from tests.engine.live.conftest import small_tmpfs

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "resources" / "demo" / "meeting.flac"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
QUANT = 2 / 32768  # 16-bit FLAC


def _murmur(*args: str, limit: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True, text=True, env=ENV,
                          cwd=ROOT, timeout=120, preexec_fn=limit)  # fmt: skip


def _record(out: Path, limit: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    return _murmur("record", "--play", str(DEMO), "--out", str(out), "--no-transcribe", "--seconds", "30",
                   limit=limit)  # fmt: skip


def _same_as_source(audio: np.ndarray) -> bool:
    source, _ = sf.read(DEMO, dtype="float32", frames=len(audio))
    return bool(np.allclose(audio, source, atol=QUANT))


def test_a_file_size_limit_mid_recording_ends_it_clearly_and_keeps_a_clean_file(tmp_path: Path) -> None:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))  # about 3.5 s of speech

    proc = _record(tmp_path, limit)
    assert proc.returncode == 1
    assert "the file has reached the largest size allowed here" in proc.stderr
    assert "recorded before it are kept in" in proc.stderr
    (flac,) = tmp_path.glob("*.flac")
    audio, rate = sf.read(flac, dtype="float32")  # a clean file: its header has the length
    assert rate == 16000 and 2.0 <= len(audio) / rate <= 6.5
    assert _same_as_source(audio)
    assert find_partial(tmp_path) == []


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / "disk") as disk:
        yield disk


def test_a_full_disk_mid_recording_keeps_the_audio_for_recovery(small_disk: Path) -> None:
    filler = small_disk / "other-files.bin"
    filler.write_bytes(b"\0" * 160 * 1024)  # the rest (about 96 KB, 3 s of speech) is the recording's

    proc = _record(small_disk)
    assert proc.returncode == 1
    assert "the disk is full" in proc.stderr and "murmur record --recover" in proc.stderr
    (partial,) = find_partial(small_disk)
    with av.open(str(partial.audio)) as container:  # decodes up to where the disk filled
        decoded = 0
        try:
            for frame in container.decode(audio=0):
                decoded += frame.samples
        except av.FFmpegError:
            pass
    assert decoded / 16000 >= 2.0  # at least the first flush

    filler.unlink()  # the user frees some space
    recovered = _murmur("record", "--recover", "--out", str(small_disk))
    assert recovered.returncode == 0, recovered.stderr
    audio, rate = sf.read(partial.audio, dtype="float32")
    assert rate == 16000 and len(audio) >= decoded - 4096 and _same_as_source(audio)
    assert find_partial(small_disk) == []
