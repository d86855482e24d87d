"""A recorder killed mid-recording keeps everything up to its last flush, and it can be made whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import numpy as np
import pytest
import soundfile as sf

from engine.errors import RecordingError
from engine.live.flac_writer import FlacWriter, marker_path
from engine.live.recovery import discard, find_partial, recover
from tests.engine.live.conftest import ROOT


def start_recorder(source: Path, out: Path) -> tuple[subprocess.Popen[str], float]:
    """`murmur record --play SOURCE` in its own process; returns it and when it began recording."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine", "record", "--play", str(source), "--out", str(out),
         "--no-transcribe"],
        stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "recording" in line, line
    return proc, time.monotonic()


def decoded_seconds(path: Path) -> tuple[np.ndarray, int]:
    pieces = []
    with av.open(str(path)) as container:
        for frame in container.decode(audio=0):
            pieces.append(frame.to_ndarray().reshape(-1).astype(np.float32) / 32768)
    return np.concatenate(pieces), 16000


def on_disk_seconds(out: Path, at_least: float, timeout: float = 120.0) -> float:
    """Wait until the recording in `out` decodes to `at_least` seconds (flushed while recording)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in out.glob("*.flac"):
            try:
                seconds = len(decoded_seconds(path)[0]) / 16000
            except (av.error.FFmpegError, ValueError):  # a header not yet written
                continue
            if seconds >= at_least:
                return seconds
        time.sleep(0.2)
    raise AssertionError(f"the recording never reached {at_least} s on disk")


def test_killed_recording_decodes_up_to_the_last_flush_and_recovers(clip: Path, tmp_path: Path) -> None:
    out = tmp_path / "recordings"
    proc, _ = start_recorder(clip, out)
    flushed = on_disk_seconds(out, at_least=4.0)  # what a crash now must not lose
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)

    partial = find_partial(out)
    assert len(partial) == 1, "the cut-short recording is found by its marker"
    samples, rate = decoded_seconds(partial[0].audio)
    kept = len(samples) / rate
    assert kept >= flushed - 0.001  # everything flushed before the kill is kept
    source, _ = sf.read(clip, dtype="float32", frames=len(samples))
    assert np.max(np.abs(samples - source)) < 2 / 32768  # the very audio, 16-bit

    seconds = recover(partial[0])
    assert seconds == pytest.approx(kept, abs=0.01)
    assert sf.info(partial[0].audio).duration == pytest.approx(kept, abs=0.01)  # a clean header now
    assert find_partial(out) == []


def test_a_closed_recording_leaves_no_marker_and_a_complete_header(tmp_path: Path) -> None:
    path = tmp_path / "r.flac"
    writer = FlacWriter(path, 16000)
    assert marker_path(path).exists()
    writer.write(np.zeros(16000 * 5, np.float32))
    assert writer.flushed_frames >= 16000 * 4  # flushed as it went, not only at the end
    writer.close()
    assert not marker_path(path).exists()
    assert sf.info(path).frames == 16000 * 5


def test_flushes_cannot_be_rarer_than_every_two_seconds(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="flush"):
        FlacWriter(tmp_path / "r.flac", 16000, flush_seconds=5)


def test_an_empty_cut_short_recording_is_reported_not_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "empty.flac"
    path.write_bytes(b"fLaC")
    marker_path(path).write_text("{}")
    [partial] = find_partial(tmp_path)
    with pytest.raises(RecordingError, match=r"no audio|cannot be read"):
        recover(partial)
    assert path.read_bytes() == b"fLaC"
    discard(partial)
    assert find_partial(tmp_path) == []


def test_an_unwritable_folder_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RecordingError, match="cannot write the recording"):
        FlacWriter(blocker / "r.flac", 16000)
