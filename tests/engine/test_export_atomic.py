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


def dead_pid() -> int:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
    return int(finished.stdout)


def test_a_cancel_while_the_folder_vanishes_is_still_reported_as_the_cancel(tmp_path):
    folder = tmp_path / "export"
    folder.mkdir()

    def cancelled(stream: BinaryIO) -> None:
        for entry in folder.iterdir():  # the user deletes the folder's contents mid-export
            entry.unlink()
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # not a FileNotFoundError from tidying the part away
        atomic_write(folder / "talk.txt", cancelled)
    assert names(folder) == []


def test_a_part_that_cannot_be_removed_does_not_keep_the_other_stale_parts(tmp_path):
    dead = dead_pid()
    # a directory cannot be unlinked (as a part held open elsewhere cannot be on Windows); one is
    # made first and one last, so it comes before the files whichever way the folder is listed
    (tmp_path / f".first.{dead}-0123abcd.part").mkdir()
    stale = [tmp_path / f".talk{n}.srt.{dead}-0123abcd.part" for n in range(8)]
    for path in stale:
        path.write_text("x")
    (tmp_path / f".last.{dead}-0123abcd.part").mkdir()
    assert sorted(remove_stale_parts(tmp_path)) == stale
    assert names(tmp_path) == [f".first.{dead}-0123abcd.part", f".last.{dead}-0123abcd.part"]


def test_on_windows_no_writer_is_signalled_so_even_a_dead_ones_part_is_left(tmp_path, monkeypatch):
    # os.kill(pid, 0) ends the process on Windows: there every part is taken as a running writer's
    part = tmp_path / f".talk.srt.{dead_pid()}-0123abcd.part"
    part.write_text("x")
    monkeypatch.setattr(sys, "platform", "win32")
    assert remove_stale_parts(tmp_path) == []
    monkeypatch.undo()
    assert part.exists() and remove_stale_parts(tmp_path) == [part]


ANOTHER_USERS_CLEANER = """
import os, sys
from pathlib import Path
from engine.export.atomic import remove_stale_parts
print([p.name for p in remove_stale_parts(Path(sys.argv[1]))])  # as this user
if os.geteuid() == 0:  # root may signal any process: clean again as nobody, who may not signal pid 1
    os.chdir(sys.argv[1])  # entered while root: the folders above are root's alone
    os.setuid(65534)
    print([p.name for p in remove_stale_parts(Path("."))])
"""


@pytest.mark.skipif(sys.platform == "win32", reason="no process owners to signal across on Windows")
def test_the_part_of_a_writer_run_by_another_user_is_left_in_place(tmp_path):
    tmp_path.chmod(0o777)  # the other user may remove parts here
    part = tmp_path / ".talk.srt.1-0123abcd.part"  # pid 1 runs, as root: not this user's to signal
    part.write_text("x")
    assert remove_stale_parts(tmp_path) == []  # here too it runs
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # a mutation run's switch reaches the cleaner too
    command = [sys.executable, "-c", ANOTHER_USERS_CLEANER, str(tmp_path)]
    cleaner = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    assert set(cleaner.stdout.splitlines()) == {"[]"} and part.exists()
