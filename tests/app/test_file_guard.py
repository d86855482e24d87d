"""Guards that keep the user's work: a project file another program changed since it was read,
where a project cannot be saved (and why, also for a user without root's right to write
anywhere), and a failing autosave folder reported once with what to do."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.file_guard import AutosaveNotice, DiskStamp, save_problem

NOBODY = 65534


def _problems_as_an_ordinary_user(folder: Path, names: list[str]) -> list[str | None]:
    """`save_problem` of each name (relative to `folder`) in a forked process that runs in `folder`
    as an unprivileged user: root may write into read-only folders, a user may not."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer through the pipe, never return into pytest
        try:
            os.close(read)
            os.chdir(folder)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setresgid(NOBODY, NOBODY, NOBODY)
                os.setresuid(NOBODY, NOBODY, NOBODY)
            answer = json.dumps([save_problem(Path(name)) for name in names])
        except BaseException as exc:  # reported to the parent
            answer = json.dumps({"error": repr(exc)})
        os.write(write, answer.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        answer = json.loads(pipe.read())
    os.waitpid(pid, 0)
    assert not isinstance(answer, dict), answer["error"]
    return answer


def test_a_file_another_program_rewrote_counts_as_changed(tmp_path: Path):
    path = tmp_path / "p.murmur"
    path.write_text("{}")
    stamp = DiskStamp.of(path)
    assert stamp == DiskStamp(path.stat().st_mtime_ns, 2)
    assert not stamp.changed(path)
    path.write_text('{"a": 1}')  # longer: changed, whatever the clock says
    os.utime(path, ns=(stamp.mtime_ns, stamp.mtime_ns))
    assert stamp.changed(path)
    path.write_text("[]")  # as long as before, written later
    os.utime(path, ns=(stamp.mtime_ns + 1_000_000, stamp.mtime_ns + 1_000_000))
    assert stamp.changed(path)


def test_a_file_that_is_gone_has_no_stamp_and_counts_as_unchanged(tmp_path: Path):
    path = tmp_path / "p.murmur"
    assert DiskStamp.of(path) is None
    path.write_text("{}")
    stamp = DiskStamp.of(path)
    path.unlink()
    assert not stamp.changed(path)  # saving recreates it: nothing to protect


def test_a_path_that_can_be_saved_has_no_problem(tmp_path: Path):
    assert save_problem(tmp_path / "p.murmur") is None
    assert save_problem(tmp_path / "not" / "yet" / "made.murmur") is None  # the save makes folders
    existing = tmp_path / "old.murmur"
    existing.write_text("{}")
    assert save_problem(existing) is None


def test_the_root_or_a_folder_is_no_place_to_save(tmp_path: Path):
    assert save_problem(Path("/")) == "/ is a folder"
    assert save_problem(tmp_path) == f"{tmp_path} is a folder"


def test_a_file_where_a_folder_should_be_is_named(tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert save_problem(blocker / "p.murmur") == f"{blocker} is a file, not a folder"
    assert save_problem(blocker / "deeper" / "p.murmur") == f"{blocker} is a file, not a folder"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_or_file_is_named(tmp_path: Path):
    folder = tmp_path / "locked"
    folder.mkdir()
    (folder / "p.murmur").write_text("{}")
    (folder / "p.murmur").chmod(0o444)
    assert save_problem(folder / "p.murmur") == f"{folder / 'p.murmur'} cannot be written"
    folder.chmod(0o555)
    try:
        assert save_problem(folder / "q.murmur") == f"{folder} cannot be written"
    finally:
        folder.chmod(0o755)


def test_a_failing_autosave_is_told_once_with_the_folder_the_reason_and_what_to_do(tmp_path: Path):
    notice = AutosaveNotice()
    told = notice.first(tmp_path, OSError(28, "No space left on device"))
    assert told == (
        f"Unsaved edits cannot be autosaved to {tmp_path} (No space left on device), so crash protection is "
        "off for this session. Save the project (File ▸ Save) to keep your work."
    )
    assert notice.first(tmp_path, OSError(28, "No space left on device")) is None
    other = AutosaveNotice().first(tmp_path, OSError("no strerror"))
    assert "(no strerror)" in other


def test_folders_an_ordinary_user_cannot_write_or_look_into_are_named(tmp_path: Path):
    """Read-only and unsearchable folders and a read-only file, as a user meets them (not as root)."""
    for name, mode in [("open", 0o777), ("locked", 0o555), ("shut", 0o666)]:
        (tmp_path / name).mkdir()
        (tmp_path / name).chmod(mode)
    (tmp_path / "open" / "kept.murmur").write_text("{}")
    (tmp_path / "open" / "kept.murmur").chmod(0o444)
    (tmp_path / "open" / "mine.murmur").write_text("{}")
    (tmp_path / "open" / "mine.murmur").chmod(0o666)
    tmp_path.chmod(0o755)
    assert save_problem(tmp_path / "open" / "p.murmur") is None  # as this test's own user, too
    try:
        problems = _problems_as_an_ordinary_user(
            tmp_path,
            ["open/p.murmur", "open/new/p.murmur", "open/mine.murmur", "open/kept.murmur",
             "locked/p.murmur", "locked/new/p.murmur", "shut/p.murmur"],
        )
    finally:
        for name in ("open", "locked", "shut"):
            (tmp_path / name).chmod(0o755)
    assert problems == [
        None,
        None,
        None,
        "open/kept.murmur cannot be written",
        "locked cannot be written",
        "locked cannot be written",
        "shut/p.murmur cannot be reached (Permission denied)",
    ]
