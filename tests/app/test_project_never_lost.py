"""The app never loses or overwrites work: a project is checked completely before any of it is
shown, a file another window changed is not silently overwritten, a broken autosave folder is
reported once, recovery metadata is cosmetic, and bad colours, deep or huge files are handled."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtWidgets import QMessageBox

from app import commands
from app import speakers as sp
from app.project import (
    MAX_UTTERANCES,
    Project,
    ProjectError,
    load_project,
    resolve_audio,
    save_project,
)
from app.project_recovery import RecoveryStore
from engine.types import Speaker, Transcript, Utterance

Buttons = QMessageBox.StandardButton


def transcript(*texts: str) -> Transcript:
    utterances = tuple(Utterance(i * 2.0, i * 2.0 + 1.0, t, "S1") for i, t in enumerate(texts))
    return Transcript(utterances, (Speaker("S1", "Ann"),), duration=2.0 * len(texts))


def saved(path: Path, *texts: str) -> Path:
    t = transcript(*texts)
    save_project(
        Project(transcript=t, speakers=sp.book_from_transcript(t), settings={"context": ["x"]}), path
    )
    return path


def rewritten(path: Path, change) -> Path:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    return path


def written(window, started: bool) -> bool:
    """Wait for the background write a save or autosave started (its outcome shown), as the user does."""
    window.projects.writer.wait()
    return started


def texts_on_disk(path: Path) -> list[str]:
    return [u["text"] for u in json.loads(path.read_text())["transcript"]["utterances"]]


# ------------------------------------------------------------------ a wrongly typed field


def test_a_wrongly_typed_setting_refuses_the_project_before_anything_is_shown(make_window, tmp_path):
    path = rewritten(saved(tmp_path / "p.murmur", "Kept words."), lambda d: d["settings"].update(context=5))
    w = make_window()
    before = saved(tmp_path / "mine.murmur", "My open work.")
    assert w.open_path(before)
    assert not w.open_path(path)
    assert "Cannot open this project" in w.last_dialog.windowTitle()
    assert "settings.context" in w.last_dialog.text()
    assert w.model.utterance(0).text == "My open work."  # the open document is untouched
    assert w.projects.path == before  # and Save still goes to its own file
    w.save()
    assert texts_on_disk(path) == ["Kept words."]  # the refused file was never overwritten


@pytest.mark.parametrize(
    ("field", "value"),
    [("speakers", [{"id": 5, "name": "x", "color": "#000000"}]), ("audio", [1, 2]), ("speech", [[0, "a"]])],
)
def test_any_wrongly_typed_field_is_a_project_error_naming_it(tmp_path, field, value):
    path = rewritten(saved(tmp_path / "p.murmur", "Hi."), lambda d: d.update({field: value}))
    with pytest.raises(ProjectError, match=field):
        load_project(path)


def test_bad_colours_fall_back_to_palette_colours(tmp_path):
    def colours(d):
        d["speakers"] = [
            {"id": "S1", "name": "Ann", "color": "red"},
            {"id": "S2", "name": "Bo", "color": "#GGGGGG"},
            {"id": "S3", "name": "Cy", "color": "#12ab34"},
        ]

    book = load_project(rewritten(saved(tmp_path / "p.murmur", "Hi."), colours)).speakers
    assert [s.color for s in book] == [sp.PALETTE[0], sp.PALETTE[1], "#12ab34"]


def test_json_nested_too_deep_says_cannot_open_this_project(make_window, tmp_path):
    path = tmp_path / "deep.murmur"
    path.write_text("[" * 100_000 + "]" * 100_000)
    w = make_window()
    assert not w.open_path(path)
    assert "Cannot open this project" in w.last_dialog.windowTitle()
    assert "nested too deep" in w.last_dialog.text()


def test_a_project_over_the_line_limit_is_refused_with_the_limit(tmp_path):
    path = tmp_path / "huge.murmur"
    line = {"start": 0.0, "end": 1.0, "text": "x", "speaker": None, "words": []}
    lines = [line] * (MAX_UTTERANCES + 1)
    path.write_text(json.dumps({
        "format": "murmur-project", "version": 1, "speakers": [],
        "transcript": {"format": "murmur-transcript", "version": 1, "utterances": lines},
    }))  # fmt: skip
    with pytest.raises(ProjectError, match=f"at most {MAX_UTTERANCES:,}"):
        load_project(path)


# ------------------------------------------------------------------ two windows, one file


def test_a_project_changed_by_another_window_is_not_silently_overwritten(make_window, tmp_path, answers):
    asked, table = answers
    path = saved(tmp_path / "shared.murmur", "First words.")
    first, second = make_window(), make_window()
    assert first.open_path(path) and second.open_path(path)
    commands.edit_text(second.model, 0, "The second window's edit.")
    assert written(second, second.save())
    commands.edit_text(first.model, 0, "The first window's edit.")
    table["Project changed on disk"] = Buttons.Cancel
    assert not first.save()
    assert asked == ["Project changed on disk"]
    assert texts_on_disk(path) == ["The second window's edit."]
    table["Project changed on disk"] = Buttons.Save
    assert written(first, first.save())
    assert texts_on_disk(path) == ["The first window's edit."]
    commands.edit_text(first.model, 0, "Saved again, nobody else wrote.")
    assert written(first, first.save()) and asked == ["Project changed on disk"] * 2  # not asked: unchanged


# ------------------------------------------------------------------ autosave that cannot write


def test_an_autosave_folder_that_cannot_be_written_is_reported_once(make_window, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the recovery folder should be")
    w = make_window(recovery=blocker / "recovery")
    assert w.open_path(saved(tmp_path / "p.murmur", "Words."))
    commands.edit_text(w.model, 0, "An edit.")
    assert written(w, w.projects.autosave())
    assert w.last_dialog is not None and w.last_dialog.windowTitle() == "Crash protection is off"
    assert "cannot be autosaved" in w.last_dialog.text()
    w.last_dialog = None
    commands.edit_text(w.model, 0, "Another edit.")
    assert written(w, w.projects.autosave())
    assert w.last_dialog is None  # told once, not every 30 s


# ------------------------------------------------------------------ recovery metadata is cosmetic


@pytest.mark.parametrize(
    ("pid", "saved_at"),
    [(10**30, 1.0), (-1, 1.0), (4_000_001, 1e300), (4_000_002, float("nan")), ("x", "y"), (True, None)],
)
def test_odd_recovery_metadata_still_offers_the_edits(tmp_path, pid, saved_at):
    folder = tmp_path / "recovery"
    store = RecoveryStore(folder, pid=os.getpid() + 1)
    t = transcript("Edits to keep.")
    store.write(Project(transcript=t, speakers=sp.book_from_transcript(t)), None)
    data = json.loads(store.path.read_text())
    data["recovery"] = {"pid": pid, "saved_at": saved_at, "project_path": 7}
    store.path.write_text(json.dumps(data))  # NaN is written as JSON's NaN, as Python does
    (found,) = RecoveryStore(folder).pending()
    assert found.project.transcript.utterances[0].text == "Edits to keep."
    assert 0 < found.saved_at < 4e9 and found.project_path is None


# ------------------------------------------------------------------ a copied project


def test_a_copied_project_opens_the_copy_of_its_audio_not_the_original(tmp_path):
    original = tmp_path / "orig"
    original.mkdir()
    audio = original / "talk.wav"
    sf.write(audio, np.zeros(1600, dtype=np.float32), 16000)
    from app.project import audio_ref

    path = original / "talk.murmur"
    save_project(Project(audio=audio_ref(audio, path, 0.1)), path)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    ref = load_project(copy / "talk.murmur").audio
    assert resolve_audio(copy / "talk.murmur", ref) == (copy / "talk.wav").resolve()
