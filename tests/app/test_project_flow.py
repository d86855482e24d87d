"""Projects and exports from the window: save and reopen, relink moved audio, recover after a
crash, and export every format with the speakers' names."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import docx
import pytest
from qt_helpers import DEMO, make_store, open_demo, show_transcript, wait_until

from app import commands
from app.project_recovery import RecoveryStore
from app.settings import TranscribeSettings
from app.widgets.export_dialog import ExportDialog
from engine.export import read_json


@pytest.fixture
def edited(make_window, demo_transcript, tmp_path: Path):
    """A window with the demo, its transcript, two named speakers and one text edit."""
    media = tmp_path / "media"
    media.mkdir()
    audio = media / "meeting.flac"
    shutil.copy(DEMO, audio)
    w = make_window()
    w.set_settings(TranscribeSettings(batch_size=4, context=("Alice",)))
    open_demo(w, audio)
    show_transcript(w, demo_transcript)
    alice, bob = w.edit.new_speaker(), w.edit.new_speaker()
    commands.set_speaker(w.model, range(0, 10), alice.id)
    commands.set_speaker(w.model, range(10, w.model.rowCount()), bob.id)
    commands.rename_speaker(w.model, alice.id, "Alice")
    commands.rename_speaker(w.model, bob.id, "Bob")
    commands.recolor_speaker(w.model, bob.id, "#112233")
    commands.edit_text(w.model, 0, "We keep this meeting short.")
    return w


def test_a_saved_project_reopens_with_edits_speakers_colours_and_audio(edited, make_window, tmp_path):
    path = tmp_path / "projects" / "standup.murmur"
    assert edited.projects.save(path)
    edited.projects.wait()  # written on the writer's thread
    assert not edited.isWindowModified() and "standup.murmur" in edited.windowTitle()
    again = make_window(store=make_store(tmp_path / "other"))
    assert again.open_path(path)
    wait_until(lambda: not again.session.busy)
    assert again.model.utterances == edited.model.utterances
    assert again.model.book == edited.model.book
    assert [s.color for s in again.model.book if s.name == "Bob"] == ["#112233"]
    assert again.session.audio is not None and again.session.audio.path == (
        tmp_path / "media" / "meeting.flac"
    )
    assert again.settings.context == ("Alice",)
    assert len(again.waveform.speech.starts) == len(edited.waveform.speech.starts)
    assert not again.isWindowModified() and not again.undo_stack.canUndo()


def test_a_project_moved_with_its_audio_finds_the_audio(edited, make_window, tmp_path):
    assert edited.projects.save(tmp_path / "standup.murmur")
    edited.projects.wait()  # written on the writer's thread
    moved = tmp_path / "usb"
    shutil.copytree(tmp_path / "media", moved / "media")
    shutil.copy(tmp_path / "standup.murmur", moved / "standup.murmur")
    shutil.rmtree(tmp_path / "media")
    again = make_window(store=make_store(tmp_path / "other"))
    again.open_path(moved / "standup.murmur")
    wait_until(lambda: not again.session.busy)
    assert again.session.audio.path == (moved / "media" / "meeting.flac").resolve()


def test_relinking_audio_that_cannot_be_found(edited, make_window, tmp_path):
    assert edited.projects.save(tmp_path / "standup.murmur")
    edited.projects.wait()  # written on the writer's thread
    again = make_window(store=make_store(tmp_path / "other"))
    assert again.projects.open(tmp_path / "standup.murmur", audio=DEMO)
    wait_until(lambda: not again.session.busy)
    assert again.session.audio.path == DEMO and again.model.rowCount() == edited.model.rowCount()


def _dead_pid() -> int:
    command = [sys.executable, "-c", "import os; print(os.getpid())"]
    return int(subprocess.run(command, capture_output=True, text=True).stdout)


def test_unsaved_edits_survive_a_crash(edited, make_window, tmp_path):
    assert edited.projects.autosave()
    assert not edited.projects.autosave(), "nothing new to autosave"
    edited.projects.wait()
    crashed = RecoveryStore(edited.projects.recovery.folder, pid=_dead_pid())
    edited.projects.recovery.path.replace(crashed.path)  # as if this session had died
    _rewrite_pid(crashed.path, crashed.pid)
    after = make_window(recovery=edited.projects.recovery.folder, store=make_store(tmp_path / "next"))
    pending = after.projects.pending()
    assert len(pending) == 1
    after.projects.restore(pending[0])
    wait_until(lambda: not after.session.busy)
    assert after.model.utterance(0).text == "We keep this meeting short."
    assert [s.name for s in after.model.book] == [s.name for s in edited.model.book]
    assert [s.name for s in after.model.book][-2:] == ["Alice", "Bob"]
    assert after.session.audio is not None and after.isWindowModified()
    after.close()
    assert not list(edited.projects.recovery.folder.glob("*.murmur-recovery"))


def _rewrite_pid(path: Path, pid: int) -> None:
    import json

    data = json.loads(path.read_text())
    data["recovery"]["pid"] = pid
    path.write_text(json.dumps(data))


def test_export_writes_every_format_with_speaker_names(edited, tmp_path, qtbot):
    dialog = ExportDialog(tmp_path / "out", "standup", {"formats": ["docx"]}, edited)
    qtbot.addWidget(dialog)
    for box in dialog.format_boxes.values():
        box.setChecked(True)
    dialog.merge.setChecked(True)
    written = edited.export_with(dialog.request())
    suffixes = sorted(p.name.removeprefix("standup") for p in written)
    assert suffixes == [".docx", ".json", ".rttm", ".seglst.json", ".srt", ".txt", ".vtt"]
    out = tmp_path / "out"
    assert "Alice" in (out / "standup.srt").read_text() and "<v Bob>" in (out / "standup.vtt").read_text()
    assert " Alice " in (out / "standup.rttm").read_text()
    txt = (out / "standup.txt").read_text()
    assert txt.count("Alice") == 1, "consecutive lines of one speaker are merged"
    paragraphs = " ".join(p.text for p in docx.Document(str(out / "standup.docx")).paragraphs)
    assert "Bob" in paragraphs and "We keep this meeting short." in paragraphs
    assert read_json(out / "standup.json").utterances == edited.model.utterances
    assert edited.store.export_choices()["merge_speakers"] is True


def test_export_dialog_refuses_no_format(edited, tmp_path, qtbot):
    dialog = ExportDialog(tmp_path, "x", {}, edited)
    qtbot.addWidget(dialog)
    for box in dialog.format_boxes.values():
        box.setChecked(False)
    dialog.accept()
    assert dialog.result() == 0 and "format" in dialog.error.text()


def test_opening_another_recording_starts_a_new_document(edited, tmp_path):
    assert edited.projects.save(tmp_path / "standup.murmur")
    edited.projects.wait()  # written on the writer's thread
    assert edited.open_path(DEMO)
    wait_until(lambda: not edited.session.busy)
    assert edited.session.audio.path == DEMO
    assert edited.model.rowCount() == 0 and not edited.undo_stack.canUndo()
    assert edited.projects.path is None and "Untitled" in edited.windowTitle()
