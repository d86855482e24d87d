"""Guards that keep the user's work: where a project cannot be saved (and why), and a failing
autosave folder reported once with what to do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.file_guard import AutosaveNotice, save_problem


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
