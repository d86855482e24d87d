"""Transcripts the engine wrote open for review and editing: Murmur JSON (its recording found
where it names it) and SRT / WebVTT (the recording of the same name beside it)."""

from __future__ import annotations

import shutil

import pytest
from qt_helpers import DEMO, wait_until

from engine.export import render
from engine.types import Speaker, Transcript, Utterance

LINES = Transcript(
    (Utterance(1.0, 4.0, "First thing said.", "a"), Utterance(5.0, 9.5, "A reply to it.", "b")),
    (Speaker("a", "Alice"), Speaker("b", "Bob")),
    duration=124.5,
    source=str(DEMO),
)


def _opened(window) -> None:
    wait_until(lambda: window.session.audio is not None and not window.session.busy, timeout=60)


def test_a_json_transcript_opens_with_its_recording_and_saving_asks_for_a_project(make_window, tmp_path):
    path = tmp_path / "meeting.json"
    path.write_bytes(render(LINES, "json"))
    window = make_window()
    assert window.open_path(path)
    _opened(window)
    assert [u.text for u in window.model.utterances] == ["First thing said.", "A reply to it."]
    assert [s.name for s in window.model.book] == ["Alice", "Bob"]
    assert window.session.audio.path == DEMO
    assert window.projects.path is None, "the transcript file is not overwritten by Save"
    assert not window.model.read_only


@pytest.mark.parametrize("fmt", ["srt", "vtt"])
def test_subtitles_open_with_the_recording_of_the_same_name_beside_them(make_window, tmp_path, fmt):
    shutil.copy(DEMO, tmp_path / "standup.flac")
    (tmp_path / f"standup.{fmt}").write_bytes(render(LINES, fmt))
    window = make_window()
    assert window.open_path(tmp_path / f"standup.{fmt}")
    _opened(window)
    assert window.session.audio.path == tmp_path / "standup.flac"
    shown = [(u.start, u.text) for u in window.model.utterances]
    assert shown == [(1.0, "First thing said."), (5.0, "A reply to it.")]
    assert [s.name for s in window.model.book] == ["Alice", "Bob"]


def test_a_file_that_is_not_a_transcript_says_why_and_keeps_what_is_open(make_window, tmp_path):
    path = tmp_path / "notes.srt"
    path.write_text("shopping list\n")
    window = make_window()
    assert not window.open_path(path)
    assert window.last_dialog.windowTitle() == "Cannot open this transcript"
    assert "no subtitle cues" in window.last_dialog.text()
