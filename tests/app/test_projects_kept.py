"""Projects and autosaves a careless day leaves behind are never lost: every crashed session's
autosave is offered (No deletes only the one asked about), one that cannot be restored is
reported once and kept, a project whose recording is missing keeps its link through a save,
a byte-order mark or a damaged byte does not make a project unopenable, and a recovered project
whose path cannot be written is saved where the user chooses. Driven through the window, its
real dialogs answered by clicking their buttons."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox
from qt_helpers import wait_until

from app import __main__ as app_main
from app import commands
from app import speakers as sp
from app.project import Project, ProjectError, ProjectTextError, audio_ref, load_project, save_project
from app.project_recovery import UNREADABLE, RecoveryStore
from engine.types import Speaker, Transcript, Utterance

Buttons = QMessageBox.StandardButton


def tone(path: Path, seconds: float = 1.0) -> Path:
    t = np.arange(int(16000 * seconds)) / 16000
    sf.write(path, (0.1 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16000)
    return path


def transcript(*texts: str) -> Transcript:
    utterances = tuple(Utterance(i * 0.4, i * 0.4 + 0.3, t, "S1") for i, t in enumerate(texts))
    return Transcript(utterances, (Speaker("S1", "Ann"),), duration=1.0)


def project(*texts: str, audio: Path | None = None, at: Path | None = None) -> Project:
    t = transcript(*texts)
    ref = None if audio is None else audio_ref(audio, at, 1.0)
    return Project(audio=ref, transcript=t, speakers=sp.book_from_transcript(t))


def dead_pid() -> int:
    command = [sys.executable, "-c", "import os; print(os.getpid())"]
    return int(subprocess.run(command, capture_output=True, text=True).stdout)


def crashed(folder: Path, saved: Project, saved_at: float, project_path: str | None = None) -> Path:
    """An autosave as a session that died left it."""
    store = RecoveryStore(folder, pid=dead_pid())
    store.write(saved, None)
    data = json.loads(store.path.read_text())
    data["recovery"].update(saved_at=saved_at, project_path=project_path)
    store.path.write_text(json.dumps(data))
    return store.path


def click_through(answers: list[str], seen: list[str], polls: int = 300) -> None:
    """Click, in each message box that opens, the button whose text is next in `answers`; a box
    that opens after them (for `polls` × 10 ms) is noted in `seen` and closed with its No/Cancel."""

    def answer(left: int = polls) -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            if answers or left > 0:
                QTimer.singleShot(10, lambda: answer(left - (0 if answers else 1)))
            return
        seen.append(box.text())
        if answers:
            wanted = answers.pop(0)
            next(b for b in box.buttons() if b.text().replace("&", "") == wanted).click()
        else:
            box.reject()
        QTimer.singleShot(10, answer)

    QTimer.singleShot(0, answer)


def answer_file_dialog(choice: Path | None) -> None:
    """In the next file dialog, choose `choice` (None: Cancel)."""

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QFileDialog):
            QTimer.singleShot(10, answer)
            return
        if choice is None:
            dialog.reject()
        else:
            dialog.selectFile(str(choice))
            dialog.accept()

    QTimer.singleShot(0, answer)


def press_save(window) -> None:
    window.activateWindow()
    window.actions_by_name["save"].trigger()  # what Ctrl+S does
    window.projects.wait()


# ------------------------------------------------------------------ two crashed sessions


@pytest.fixture
def two_crashes(tmp_path: Path) -> tuple[Path, Path, Path]:
    folder = tmp_path / "recovery"
    older = crashed(folder, project("Monday's words.", audio=tone(tmp_path / "monday.wav")), 1_700_000_000.0)
    newer = crashed(
        folder, project("Tuesday's words.", audio=tone(tmp_path / "tuesday.wav")), 1_700_090_000.0
    )
    return folder, older, newer


def test_two_crashed_sessions_are_each_named_and_no_deletes_only_the_one_asked_about(
    make_window: Callable, two_crashes
):
    folder, _, newer = two_crashes
    w = make_window(recovery=folder)
    seen: list[str] = []
    click_through(["No", "Yes"], seen)
    app_main.offer_recovery(w)
    assert len(seen) == 2, "each autosave is asked about"
    assert "tuesday.wav" in seen[0] and "(1 of 2)" in seen[0]
    assert "monday.wav" in seen[1] and "(2 of 2)" in seen[1]
    assert not newer.exists()  # No: the one the user saw
    wait_until(lambda: not w.session.busy)
    assert w.model.utterance(0).text == "Monday's words."  # Yes: the other one, restored


def test_restoring_the_newest_keeps_the_other_autosave_for_the_next_start(make_window: Callable, two_crashes):
    folder, older, _ = two_crashes
    w = make_window(recovery=folder)
    seen: list[str] = []
    click_through(["Yes"], seen)
    app_main.offer_recovery(w)
    assert len(seen) == 1, "asked again after restoring"
    assert "1 more autosave(s) kept" in w.statusBar().currentMessage()
    wait_until(lambda: not w.session.busy)
    assert w.model.utterance(0).text == "Tuesday's words."
    assert older.exists(), "an autosave the user never saw was deleted"


# ------------------------------------------------------------------ an autosave that cannot be read


def test_an_autosave_that_cannot_be_restored_is_reported_once_and_kept(make_window: Callable, tmp_path: Path):
    folder = tmp_path / "recovery"
    path = crashed(folder, project("Words from a newer Murmur."), 1_700_000_000.0)
    data = json.loads(path.read_text())
    data["version"] = 2
    path.write_text(json.dumps(data))
    original = path.read_bytes()
    w = make_window(recovery=folder)
    app_main.offer_recovery(w)
    assert w.last_dialog is not None and w.last_dialog.windowTitle() == "An autosave cannot be restored"
    assert path.name in w.last_dialog.text() and "format version 2" in w.last_dialog.text()
    kept = folder / UNREADABLE / path.name
    assert kept.read_bytes() == original and not path.exists()
    w.last_dialog.close()
    w.last_dialog = None
    again = make_window(recovery=folder)
    app_main.offer_recovery(again)
    assert again.last_dialog is None, "reported again at the next start"
    assert kept.read_bytes() == original


# ------------------------------------------------------------------ the recording is missing


def test_a_missing_recording_keeps_its_link_through_a_cancelled_locate_and_a_save(
    make_window: Callable, tmp_path: Path
):
    (tmp_path / "media").mkdir()
    audio = tone(tmp_path / "media" / "talk.wav")
    path = tmp_path / "talk.murmur"
    save_project(project("First line.", audio=audio, at=path), path)
    linked = json.loads(path.read_text())["audio"]
    away = audio.rename(tmp_path / "talk-away.wav")  # the drive holding it is not plugged in
    w = make_window()
    answer_file_dialog(None)  # "Where is talk.wav?" → Cancel
    assert w.open_path(path)
    assert w.last_dialog.windowTitle() == "Recording not found"
    commands.edit_text(w.model, 0, "An edit made without the recording.")
    press_save(w)
    saved = json.loads(path.read_text())
    assert saved["audio"] == linked, "the link to the recording was dropped"
    assert saved["transcript"]["utterances"][0]["text"] == "An edit made without the recording."
    away.rename(audio)  # the drive is back
    again = make_window()
    assert again.open_path(path)
    wait_until(lambda: not again.session.busy)
    assert again.session.audio is not None and again.session.audio.path == audio.resolve()


# ------------------------------------------------------------------ a byte-order mark, a damaged byte


def test_a_project_with_a_byte_order_mark_opens(make_window: Callable, tmp_path: Path):
    path = tmp_path / "bom.murmur"
    save_project(project("Saved by a Windows editor."), path)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    w = make_window()
    assert w.open_path(path)
    assert w.model.utterance(0).text == "Saved by a Windows editor."


def damaged(tmp_path: Path) -> tuple[Path, bytes, int, int]:
    """A project with one byte of a line of speech not UTF-8: the file, its bytes, line, column."""
    path = tmp_path / "damaged.murmur"
    save_project(project("Fine words.", "A damaged word."), path)
    raw = path.read_bytes()
    offset = raw.index(b"damaged")
    raw = raw[:offset] + b"\xff" + raw[offset + 1 :]
    path.write_bytes(raw)
    line_start = raw.rindex(b"\n", 0, offset) + 1
    return path, raw, raw[:offset].count(b"\n") + 1, offset - line_start + 1


def test_a_damaged_byte_is_named_by_line_column_and_offset(tmp_path: Path):
    path, raw, line, column = damaged(tmp_path)
    with pytest.raises(ProjectTextError) as caught:
        load_project(path)
    offset = raw.index(b"\xff")
    assert f"line {line}, column {column} (byte {offset:,}: 0xFF)" in str(caught.value)
    assert [u.text for u in caught.value.salvage.transcript.utterances] == [
        "Fine words.",
        "A \ufffdamaged word.",
    ]


def test_broken_json_is_named_by_line_and_column(tmp_path: Path):
    path = tmp_path / "cut.murmur"
    save_project(project("Fine words."), path)
    text = path.read_text()
    path.write_text(text[: text.index('"speakers"')] + '"speakers": [,')
    lines = path.read_text().count("\n") + 1
    with pytest.raises(ProjectError, match=rf"not valid JSON \(line {lines}, column \d+: "):
        load_project(path)


@pytest.mark.parametrize("choice", ["Open", "Cancel"])
def test_a_damaged_project_opens_what_can_be_read_and_leaves_the_file_as_it_was(
    make_window: Callable, tmp_path: Path, choice: str
):
    path, raw, line, _ = damaged(tmp_path)
    w = make_window()
    seen: list[str] = []
    click_through([choice], seen)
    opened = w.open_path(path)
    assert f"line {line}" in seen[0]
    assert path.read_bytes() == raw
    if choice == "Cancel":
        assert not opened and w.model.rowCount() == 0
        return
    assert opened and w.model.utterance(1).text == "A \ufffdamaged word."
    assert w.isWindowModified(), "the repaired project counts as unsaved"
    press_save(w)
    assert load_project(path).transcript.utterances[1].text == "A \ufffdamaged word."


# ------------------------------------------------------------------ a recovered project at `/`


@pytest.mark.parametrize("where", ["/", "read-only"])
def test_a_recovered_project_whose_path_cannot_be_written_is_saved_where_the_user_chooses(
    make_window: Callable, tmp_path: Path, where: str
):
    folder = tmp_path / "recovery"
    if where == "read-only":
        blocker = tmp_path / "a-file"
        blocker.write_text("a file where the project's folder was")
        where = str(blocker / "project.murmur")
    crashed(folder, project("Recovered words."), 1_700_000_000.0, project_path=where)
    w = make_window(recovery=folder)
    click_through(["Yes"], [])
    app_main.offer_recovery(w)
    assert w.model.utterance(0).text == "Recovered words."
    chosen = tmp_path / "chosen.murmur"
    answer_file_dialog(chosen)
    press_save(w)
    assert load_project(chosen).transcript.utterances[0].text == "Recovered words."
    assert w.projects.path == chosen and not w.isWindowModified()


def test_unreadable_autosaves_of_a_running_session_are_left_alone(tmp_path: Path):
    folder = tmp_path / "recovery"
    folder.mkdir()
    live = folder / "session-live.murmur-recovery"
    live.write_text(json.dumps({"format": "nothing", "recovery": {"pid": os.getpid()}}))
    assert RecoveryStore(folder).set_aside() == []
    assert live.exists()
