"""Atomic writes (`engine.export.atomic`), which every export and project save goes through: a write
that fails leaves the old file byte for byte and no temporary file; a writer killed mid-write
leaves a part file that the next write into the folder removes; asking whether another writer
still runs never disturbs it; `remove_stale_parts` says what it removed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import BinaryIO

import pytest

from engine.export.atomic import atomic_write, remove_stale_parts

ROOT = Path(__file__).resolve().parents[2]
KILLED_MID_WRITE = """
import sys, time
from pathlib import Path
from engine.export.atomic import atomic_write
def write(stream):
    stream.write(b"half a transcript")
    stream.flush()
    print("writing", flush=True)
    time.sleep(120)
atomic_write(Path(sys.argv[1]), write)
"""


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_write_replaces_the_file_whole_and_leaves_nothing_else(tmp_path):
    path = tmp_path / "talk.txt"
    path.write_bytes(b"old words")
    atomic_write(path, lambda stream: stream.write(b"new words"))
    assert path.read_bytes() == b"new words" and names(tmp_path) == ["talk.txt"]


@pytest.mark.parametrize("failure", [RuntimeError("disk full"), KeyboardInterrupt()])
def test_a_write_that_fails_or_is_interrupted_leaves_the_old_file_and_no_part(tmp_path, failure):
    path = tmp_path / "talk.txt"
    path.write_bytes(b"old words")

    def broken(stream: BinaryIO) -> None:
        stream.write(b"new half")
        raise failure

    with pytest.raises(type(failure)):
        atomic_write(path, broken)
    assert path.read_bytes() == b"old words" and names(tmp_path) == ["talk.txt"]


def test_the_part_file_of_a_writer_killed_mid_write_is_removed_by_the_next_write(tmp_path):
    command = [sys.executable, "-c", KILLED_MID_WRITE, str(tmp_path / "talk.srt")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # a mutation run's switch reaches the writer too
    writer = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "writing\n"
        (part,) = tmp_path.iterdir()  # named for its writer, hidden, beside the file it will replace
        assert re.fullmatch(rf"\.talk\.srt\.{writer.pid}-[0-9a-f]{{8}}\.part", part.name), part.name
    finally:
        writer.kill()
        writer.wait()
    atomic_write(tmp_path / "talk.txt", lambda stream: stream.write(b"hi"))
    assert names(tmp_path) == ["talk.txt"]  # the killed writer's part is gone, talk.srt never appeared


def test_asking_whether_another_writer_runs_leaves_it_running_and_its_part_in_place(tmp_path):
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        live = tmp_path / f".talk.vtt.{writer.pid}-0123abcd.part"
        live.write_text("half")
        atomic_write(tmp_path / "talk.txt", lambda stream: stream.write(b"hi"))
        assert live.exists()
        with pytest.raises(subprocess.TimeoutExpired):  # a signal other than 0 would have ended it
            writer.wait(timeout=1.0)
    finally:
        writer.kill()
        writer.wait()


def test_removing_stale_parts_says_which_it_removed_and_leaves_other_files(tmp_path):
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
    dead = int(finished.stdout)
    stale = tmp_path / f".talk.srt.{dead}-0123abcd.part"
    others = [f".talk.srt.{dead}-0123abcd.partial", f"talk.srt.{dead}-0123abcd.part",
              f".talk.srt.{dead}-0123abc.part", f".talk.srt.{os.getpid()}-0123abcd.part",
              "talk.srt"]  # fmt: skip
    for name in [stale.name, *others]:
        (tmp_path / name).write_text("x")
    assert remove_stale_parts(tmp_path) == [stale]
    assert names(tmp_path) == sorted(others)
    assert remove_stale_parts(tmp_path / "missing") == []  # a folder that is not there: nothing to do
