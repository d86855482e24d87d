"""Project files: lossless round trip, audio relinking, and crash recovery."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.project import (
    Project,
    ProjectError,
    audio_ref,
    load_project,
    resolve_audio,
    save_project,
)
from app.project_recovery import RecoveryStore
from app.speakers import SpeakerInfo
from engine.types import Chunk, Speaker, SpeechSegment, Transcript, Utterance, Word


def sample_project(audio: Path, where: Path) -> Project:
    transcript = Transcript(
        utterances=(
            Utterance(0.5, 2.0, "Hello there.", "s1", (Word(0.5, 1.0, "Hello"), Word(1.1, 2.0, "there."))),
            Utterance(2.5, 4.0, "Hi.", None),
        ),
        speakers=(Speaker("s1", "Alice"),),
        duration=5.0,
        source=str(audio),
        model="faster-whisper tiny.en",
        chunks=(Chunk(0, 0.0, 5.0, (SpeechSegment(0.5, 4.0),)),),
    )  # fmt: skip
    return Project(
        audio=audio_ref(audio, where, 5.0),
        transcript=transcript,
        speakers=(SpeakerInfo("s1", "Alice", "#E15759"),),
        settings={"backend": "whisper", "batch_size": 4},
        speech=(SpeechSegment(0.5, 4.0),),
        chunks=(Chunk(0, 0.0, 5.0),),
    )


@pytest.fixture
def audio(tmp_path: Path) -> Path:
    path = tmp_path / "media" / "talk.wav"
    path.parent.mkdir()
    path.write_bytes(b"RIFF....")
    return path


def test_a_saved_project_reopens_identical(tmp_path, audio):
    path = tmp_path / "work" / "talk.murmur"
    project = sample_project(audio, path)
    save_project(project, path)
    again = load_project(path)
    assert again.transcript == project.transcript
    assert again.speakers == project.speakers and again.settings == project.settings
    assert again.speech == project.speech and again.chunks == project.chunks
    assert again.audio is not None and again.audio.relative == "../media/talk.wav"


def test_audio_is_found_when_project_and_audio_moved_together(tmp_path, audio):
    path = tmp_path / "talk.murmur"
    save_project(sample_project(audio, path), path)
    moved = tmp_path / "elsewhere"
    shutil.copytree(tmp_path / "media", moved / "media")
    shutil.copy(path, moved / "talk.murmur")
    shutil.rmtree(tmp_path / "media")
    project = load_project(moved / "talk.murmur")
    assert resolve_audio(moved / "talk.murmur", project.audio) == (moved / "media" / "talk.wav").resolve()


def test_audio_beside_the_project_is_found_and_missing_audio_is_none(tmp_path, audio):
    path = tmp_path / "p" / "talk.murmur"
    save_project(sample_project(audio, path), path)
    project = load_project(path)
    audio.unlink()
    assert resolve_audio(path, project.audio) is None
    (tmp_path / "p" / "talk.wav").write_bytes(b"x")
    assert resolve_audio(path, project.audio) == (tmp_path / "p" / "talk.wav").resolve()


@pytest.mark.parametrize(
    ("content", "message"),
    [("not json", "not valid JSON"), ('{"format": "other"}', "not a Murmur project"),
     ('{"format": "murmur-project", "version": 99}', "version")],
)  # fmt: skip
def test_broken_project_files_are_refused_with_a_reason(tmp_path, content, message):
    path = tmp_path / "bad.murmur"
    path.write_text(content)
    with pytest.raises(ProjectError, match=message):
        load_project(path)


def _dead_pid() -> int:
    command = [sys.executable, "-c", "import os; print(os.getpid())"]
    proc = subprocess.run(command, capture_output=True, text=True)
    return int(proc.stdout)


def test_autosave_of_a_crashed_session_is_offered_and_live_ones_are_not(tmp_path, audio):
    folder = tmp_path / "recovery"
    crashed = RecoveryStore(folder, pid=_dead_pid())
    crashed.write(sample_project(audio, tmp_path / "x.murmur"), tmp_path / "x.murmur")
    live = RecoveryStore(folder)
    live.write(sample_project(audio, tmp_path / "y.murmur"), None)
    found = RecoveryStore(folder).pending()
    assert [r.path for r in found] == [crashed.path]
    assert found[0].project_path == tmp_path / "x.murmur"
    assert found[0].project.transcript.utterances[0].text == "Hello there."


def test_a_discarded_or_unreadable_autosave_is_not_offered(tmp_path, audio):
    folder = tmp_path / "recovery"
    store = RecoveryStore(folder, pid=_dead_pid())
    store.write(sample_project(audio, tmp_path / "x.murmur"), None)
    store.discard()
    (folder / "junk.murmur-recovery").write_text(json.dumps({"format": "murmur-project"}))
    assert RecoveryStore(folder).pending() == []
