"""`murmur record`'s files: every recording gets its own file, bad `--seconds` are refused, and the
newest cut-short recording is the one offered first."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.cli import main
from engine.live.flac_writer import FlacWriter, new_recording_path
from engine.live.recovery import find_partial
from tests.engine.live.conftest import ROOT, write_clip


def test_names_claimed_in_the_same_second_are_distinct_and_never_an_existing_file(tmp_path: Path) -> None:
    now = time.time()
    first, second = new_recording_path(tmp_path, now), new_recording_path(tmp_path, now)
    assert first != second and first.exists() and second.exists()
    assert second.name == first.name.replace(".flac", "-2.flac")
    first.write_bytes(b"an earlier recording")
    second.unlink()
    assert new_recording_path(tmp_path, now) == second  # the free name, not the taken one
    assert first.read_bytes() == b"an earlier recording"


def test_two_recorders_started_in_the_same_second_both_keep_a_whole_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    now = time.time()
    taken = [new_recording_path(out, now + s) for s in range(0, 60)]  # every name of the next minute
    for path in taken:
        path.write_bytes(b"kept")
    clip = write_clip(tmp_path / "clip.flac", 0.0, 3.0)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "engine", "record", "--play", str(clip), "--seconds", "2", "--out", str(out),
           "--no-transcribe"]  # fmt: skip
    procs = [subprocess.Popen(cmd, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errs = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    made = sorted(set(out.glob("*.flac")) - set(taken))
    assert len(made) == 2 and all(m.stem.endswith("-2") or m.stem.endswith("-3") for m in made)
    for path in made:
        assert sf.info(path).duration == pytest.approx(2.0, abs=0.3)
    assert all(p.read_bytes() == b"kept" for p in taken)


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "inf"])
def test_seconds_that_are_not_a_finite_positive_number_are_refused(tmp_path: Path, clip: Path, capfd,
                                                                   bad: str) -> None:  # fmt: skip
    out = tmp_path / "out"
    code = main(["record", "--play", str(clip), "--seconds", bad, "--out", str(out), "--no-transcribe"])
    assert code == 1
    assert f"--seconds must be a finite number of seconds above 0, got {float(bad)}" in capfd.readouterr().err
    assert not out.exists() or not list(out.iterdir())


def test_the_newest_cut_short_recording_is_offered_first(tmp_path: Path) -> None:
    paths = [tmp_path / f"{name}.flac" for name in ("b-middle", "c-oldest", "a-newest")]
    for age, path in zip((100, 200, 0), paths, strict=True):
        writer = FlacWriter(path, 16000)
        writer.write(np.zeros(1600, np.float32))
        writer.flush()  # left open: cut short
        marker = path.with_name(path.name + ".recording.json")
        os.utime(marker, (time.time() - age, time.time() - age))
    assert [p.audio.name for p in find_partial(tmp_path)] == ["a-newest.flac", "b-middle.flac",
                                                               "c-oldest.flac"]  # fmt: skip
