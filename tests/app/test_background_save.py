"""Saving and autosaving never stall the window: Ctrl+S and the autosave timer take a snapshot
and write it on another thread; what was typed after the snapshot stays unsaved, and a write
that fails says so and leaves the edits marked unsaved."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from app import commands
from app.project import load_project
from app.transcript_model import TEXT


def _type_into(window, qtbot, row: int, text: str) -> None:
    view = window.transcript_view
    view.select_row(row)
    view.edit(view.filter.mapFromSource(window.model.index(row, TEXT)))
    editor = view.row_delegate.editor
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)


def test_ctrl_s_saves_the_moment_it_was_pressed_while_editing_goes_on(demo_window, qtbot, tmp_path):
    window = demo_window
    path = tmp_path / "meeting.murmur"
    window.projects.path = path
    second = window.model.utterance(1).text
    _type_into(window, qtbot, 0, "Saved words.")
    window.actions_by_name["save"].trigger()
    assert not window.isWindowModified(), "the window counts as saved at once"
    assert window.statusBar().currentMessage() == "Saving meeting.murmur…", "Ctrl+S shows at once"
    _type_into(window, qtbot, 1, "Typed after saving.")  # while the file may still be written
    assert window.isWindowModified()
    qtbot.waitUntil(lambda: not window.projects.writer.busy, timeout=10_000)
    saved = load_project(path).transcript
    assert saved.utterances[0].text == "Saved words."
    assert saved.utterances[1].text == second
    assert "Saved meeting.murmur" in window.statusBar().currentMessage()


def test_the_autosave_timer_writes_the_recovery_file_in_the_background(demo_window, qtbot):
    window = demo_window
    window.projects.timer.setInterval(50)
    commands.edit_text(window.model, 2, "An autosaved edit.")
    recovery = window.projects.recovery.path
    qtbot.waitUntil(lambda: recovery.exists() and not window.projects.writer.busy, timeout=10_000)
    data = json.loads(recovery.read_text(encoding="utf-8"))
    assert data["transcript"]["utterances"][2]["text"] == "An autosaved edit."
    window.actions_by_name["undo"].trigger()
    qtbot.waitUntil(lambda: "An autosaved edit." not in recovery.read_text(encoding="utf-8"), timeout=10_000)


def test_a_save_that_fails_reports_it_and_keeps_the_edits_unsaved(demo_window, qtbot, tmp_path):
    window = demo_window
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the project's folder should be")
    commands.edit_text(window.model, 0, "Precious edit.")
    assert window.projects.save(blocker / "meeting.murmur")
    qtbot.waitUntil(lambda: isinstance(window.last_dialog, QMessageBox), timeout=10_000)
    assert window.last_dialog.windowTitle() == "Could not save the project"
    assert window.isWindowModified() and window.projects.path is None
    assert window.model.utterance(0).text == "Precious edit."


def test_a_save_right_after_shifting_all_times_writes_one_shifted_line_of_speech_per_line(
    demo_window, qtbot, tmp_path
):
    # the file is made a line of speech at a time on the writer's thread (never encoded in one go),
    # and the shifted words are built there too, while the table rebuilds its own in idle slices
    window = demo_window
    before = window.model.utterances
    assert window.edit.shift_times("1.5")
    path = tmp_path / "meeting.murmur"
    window.projects.path = path
    window.actions_by_name["save"].trigger()
    qtbot.waitUntil(lambda: not window.projects.writer.busy, timeout=10_000)
    lines = [line.strip().rstrip(",") for line in path.read_text(encoding="utf-8").splitlines()]
    saved = [json.loads(line) for line in lines if line.startswith('{"start"') and '"words"' in line]
    assert [u["text"] for u in saved] == [u.text for u in before]
    for u, old in zip(saved, before, strict=True):
        assert u["start"] == old.start + 1.5
        assert [w["start"] for w in u["words"]] == [w.start + 1.5 for w in old.words]
    assert load_project(path).transcript.utterances == window.model.utterances


def test_a_save_the_writer_cannot_encode_reaches_the_window(demo_window, qtbot, tmp_path):
    # a ValueError on the writer's thread (here: a path the system refuses) is reported like a full
    # disk: a dialog, and the edits still unsaved
    window = demo_window
    commands.edit_text(window.model, 0, "Precious edit.")
    assert window.projects.save(tmp_path / "bad\0name.murmur")
    qtbot.waitUntil(lambda: isinstance(window.last_dialog, QMessageBox), timeout=10_000)
    assert window.last_dialog.windowTitle() == "Could not save the project"
    assert "null" in window.last_dialog.text()
    assert window.isWindowModified() and window.projects.path is None
