"""Autosaves in the recovery folder, without a window: which are offered after a crash (and when
they say they were saved), which are set aside into `unreadable/` and reported, and which are
left where they are because their session still runs or they cannot be moved."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.project import Project, save_project
from app.project_recovery import RECOVERY_SUFFIX, UNREADABLE, RecoveryStore
from engine.types import Transcript, Utterance


def ended_pid() -> int:
    """The pid of a process that has ended."""
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True).stdout)  # fmt: skip


def project(text: str) -> Project:
    return Project(transcript=Transcript((Utterance(0.0, 1.0, text),)))


def unreadable(folder: Path, name: str, pid: int) -> Path:
    """An autosave from a newer Murmur (format version 2) written by process `pid`."""
    store = RecoveryStore(folder, pid=pid)
    store.write(project("from a newer Murmur"), None)
    data = json.loads(store.path.read_text())
    data["version"] = 2
    path = folder / f"{name}{RECOVERY_SUFFIX}"
    path.write_text(json.dumps(data))
    store.path.unlink()
    return path


def test_every_unreadable_autosave_of_an_ended_session_is_set_aside_with_why(tmp_path: Path):
    dead = ended_pid()
    readable = RecoveryStore(tmp_path, pid=dead)
    readable.write(project("edits to offer"), None)  # sorts first: "session-<pid>-…"
    running = unreadable(tmp_path, "session-0-running", os.getpid())  # another window of this Murmur
    first, second = unreadable(tmp_path, "session-a", dead), unreadable(tmp_path, "session-b", dead)
    garbage = tmp_path / f"session-c{RECOVERY_SUFFIX}"
    garbage.write_bytes(b"\x00\x01 no pid anywhere")  # cut short before its recovery details
    contents = first.read_bytes(), second.read_bytes(), garbage.read_bytes()
    moved = RecoveryStore(tmp_path).set_aside()
    assert readable.path.exists() and running.exists()
    offered = RecoveryStore(tmp_path).pending()  # the running session's unreadable one sorts first
    assert [(r.path, r.project_path) for r in offered] == [(readable.path, None)]
    aside = tmp_path / UNREADABLE
    assert [where for where, _ in moved] == [aside / first.name, aside / second.name, aside / garbage.name]
    assert all("format version 2" in why for _, why in moved[:2])
    assert tuple(where.read_bytes() for where, _ in moved) == contents
    assert not first.exists() and not second.exists() and not garbage.exists()
    assert RecoveryStore(tmp_path).set_aside() == []  # reported once


def test_this_sessions_own_autosave_is_never_set_aside_nor_offered(tmp_path: Path):
    store = RecoveryStore(tmp_path, pid=ended_pid())  # as if this process had that pid
    store.path.write_text("{not json")
    assert store.set_aside() == [] and store.path.exists()
    store.write(project("my own edits"), None)
    assert store.pending() == []


def test_an_autosave_that_cannot_be_moved_aside_stays_and_is_not_reported(tmp_path: Path):
    path = unreadable(tmp_path, "session-a", ended_pid())
    (tmp_path / UNREADABLE).write_text("a file where the folder should be")
    assert RecoveryStore(tmp_path).set_aside() == []
    assert path.exists()


def test_a_project_saved_under_an_autosaves_name_is_offered_with_the_files_time(tmp_path: Path):
    path = tmp_path / f"copied{RECOVERY_SUFFIX}"
    save_project(project("no recovery details"), path)
    os.utime(path, (1_600_000_000.0, 1_600_000_000.0))
    (found,) = RecoveryStore(tmp_path).pending()
    assert found.project.transcript.utterances[0].text == "no recovery details"
    assert (found.path, found.saved_at, found.project_path) == (path, 1_600_000_000.0, None)


def test_an_autosave_names_where_its_project_was_saved_and_its_session(tmp_path: Path):
    dead = ended_pid()
    store = RecoveryStore(tmp_path, pid=dead)
    before = time.time()
    store.write(project("edits"), tmp_path / "meeting.murmur")
    assert store.path.parent == tmp_path and store.path.name.startswith(f"session-{dead}-")
    recorded = json.loads(store.path.read_text())["recovery"]
    assert recorded["pid"] == dead and recorded["project_path"] == str(tmp_path / "meeting.murmur")
    assert before <= recorded["saved_at"] <= time.time()
    (found,) = RecoveryStore(tmp_path).pending()
    assert found.project_path == tmp_path / "meeting.murmur" and found.saved_at == recorded["saved_at"]
    store.discard()
    assert not store.path.exists() and RecoveryStore(tmp_path).pending() == []
    store.discard()  # already gone: nothing to do, no error
    blocked = tmp_path / "meeting.murmur"
    blocked.write_text("a file where the recovery folder should be")
    RecoveryStore(blocked).discard()  # nothing there to discard: no error either


def test_a_running_sessions_autosave_is_not_offered_and_the_session_is_left_running(tmp_path: Path):
    session = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        RecoveryStore(tmp_path, pid=session.pid).write(project("still being edited"), None)
        assert RecoveryStore(tmp_path).pending() == []
        with pytest.raises(subprocess.TimeoutExpired):
            session.wait(timeout=1)  # asking whether it runs sends it no signal that ends it
    finally:
        session.kill()
        session.wait()
