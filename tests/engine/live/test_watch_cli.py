"""`murmur watch`: files dropped into a folder are transcribed once each, across restarts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.engine.live.conftest import ROOT, write_clip


def start_watch(folder: Path, out: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "engine", "watch", str(folder), "--out", str(out), "--settle", "1.5",
         "--interval", "0.3", "--diarizer", "none", "--format", "txt"],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return out, err


def wait_for(paths: list[Path], timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, f"not written in time: {[p for p in paths if not p.exists()]}"
        time.sleep(0.3)


def test_dropped_files_are_transcribed_once_each_and_a_broken_one_is_skipped(tmp_path: Path) -> None:
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    watch = start_watch(inbox, out)
    write_clip(tmp_path / "first.flac", 0.0, 4.0).rename(inbox / "first.flac")  # dropped whole
    (inbox / "broken.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk" * 10)
    whole = write_clip(tmp_path / "slow.wav", 4.5, 8.0).read_bytes()
    with (inbox / "slow.wav").open("wb") as f:  # written in pieces, pausing in between
        for i in range(0, len(whole), len(whole) // 4 + 1):
            f.write(whole[i : i + len(whole) // 4 + 1])
            f.flush()
            time.sleep(0.8)
    wait_for([out / "first.txt", out / "slow.txt"])
    time.sleep(2.0)  # more scans: nothing is taken twice
    stdout, stderr = stop(watch)

    assert stdout.count("transcribed first.flac") == 1 and stdout.count("transcribed slow.wav") == 1
    assert "notes" in (out / "slow.txt").read_text().lower()  # the whole file, not its first piece
    assert stderr.count("skipped broken.wav") == 1
    state = json.loads((out / ".murmur-watch.json").read_text())
    assert {k: v["outcome"] for k, v in state.items()} == {"first.flac": "done", "slow.wav": "done",
                                                           "broken.wav": "failed"}  # fmt: skip

    # a restart remembers: only the file added since is transcribed
    mtime = (out / "first.txt").stat().st_mtime
    write_clip(inbox / "third.flac", 8.7, 11.0)
    watch = start_watch(inbox, out)
    wait_for([out / "third.txt"])
    time.sleep(2.0)
    stdout, stderr = stop(watch)
    assert "transcribed third.flac" in stdout and "first" not in stdout and "slow" not in stdout
    assert "broken" not in stderr
    assert (out / "first.txt").stat().st_mtime == mtime
