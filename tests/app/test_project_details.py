"""A project file in detail: what it records about the audio, how it reads in a text editor, the
exact message of each refusal, and which autosaves are offered back and when they were saved."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.project import (
    MAX_PROJECT_BYTES,
    AudioRef,
    Project,
    ProjectError,
    load_project,
    save_project,
)
from app.project_recovery import RecoveryStore
from engine.types import Chunk, SpeechSegment, Transcript, Utterance


def recording(folder: Path) -> Path:
    audio = folder / "audio" / "Zoë's call.wav"
    audio.parent.mkdir(parents=True, exist_ok=True)
    audio.write_bytes(b"RIFF" + bytes(996))  # only its size and place matter here
    return audio


def project_with(audio: Path, **fields) -> Project:
    transcript = Transcript((Utterance(0.0, 1.0, "Grüß dich.", "S1"),), duration=5.0)
    return Project(AudioRef(str(audio), duration=5.0, stream=1), transcript, **fields)


def test_a_saved_project_records_the_audios_size_and_stream_and_reads_as_text(tmp_path):
    audio = recording(tmp_path)
    path = tmp_path / "new" / "deeper" / "call.murmur"  # folders that do not exist yet
    save_project(project_with(audio, speech=(SpeechSegment(0.5, 1.0),)), path)
    text = path.read_text(encoding="utf-8")
    assert "Grüß dich." in text and "Zoë's call.wav" in text  # UTF-8, not \\u escapes
    assert text.splitlines()[1] == ' "format": "murmur-project",'  # indented one space a level
    saved = json.loads(text)["audio"]
    assert saved == {"path": str(audio.resolve()), "relative": "../../audio/Zoë's call.wav", "size": 1000,
                     "duration": 5.0, "stream": 1}  # fmt: skip
    loaded = load_project(path)
    assert loaded.audio == AudioRef(str(audio.resolve()), "../../audio/Zoë's call.wav", 1000, 5.0, 1)
    assert loaded.speech == (SpeechSegment(0.5, 1.0),)


def test_audio_that_is_gone_is_saved_without_a_size(tmp_path):
    save_project(project_with(tmp_path / "gone.wav"), tmp_path / "p.murmur")
    assert json.loads((tmp_path / "p.murmur").read_text())["audio"]["size"] is None


@pytest.mark.parametrize(
    "data, message",
    [
        ({"format": "something-else"}, "p.murmur is not a valid Murmur project: it is not a Murmur project"),
        ({"format": "murmur-project", "version": 7},
         "p.murmur is not a valid Murmur project: it has format version 7; this Murmur reads 1"),
        ({"format": "murmur-project", "version": 1, "audio": None, "speakers": [], "chunks": [[0, 1], [2]]},
         "p.murmur is not a valid Murmur project: chunks[1]"),
        ({"format": "murmur-project", "version": 1, "audio": None, "speakers": [], "speech": [[0, 1e300]]},
         "p.murmur is not a valid Murmur project: speech[0] "),
        ({"format": "murmur-project", "version": 1, "speakers": [],
          "audio": {"path": "a.wav", "duration": 1e300}},
         "p.murmur is not a valid Murmur project: audio.duration "),
    ],
)  # fmt: skip
def test_each_refusal_names_what_is_wrong(tmp_path, data, message):
    path = tmp_path / "p.murmur"
    path.write_text(json.dumps(data))
    with pytest.raises(ProjectError) as refused:
        load_project(path)
    assert str(refused.value).startswith(message)


def test_a_project_without_speech_or_chunks_opens_with_none(tmp_path):
    path = tmp_path / "p.murmur"
    path.write_text(json.dumps({"format": "murmur-project", "version": 1, "audio": None, "speakers": []}))
    project = load_project(path)
    assert project.speech == () and project.chunks == () and project.audio is None


def test_a_project_over_the_size_limit_is_refused_with_both_sizes(tmp_path):
    path = tmp_path / "huge.murmur"
    with path.open("wb") as f:
        f.truncate(MAX_PROJECT_BYTES + 100 * 2**20)  # sparse: takes no disk
    with pytest.raises(
        ProjectError, match=r"^huge.murmur is 612 MB; Murmur opens projects of at most 512 MB$"
    ):
        load_project(path)
    with path.open("r+b") as f:
        f.truncate(MAX_PROJECT_BYTES)  # exactly at the limit: read (and refused only as not JSON)
    with pytest.raises(ProjectError, match="not valid JSON"):
        load_project(path)


def test_a_project_that_cannot_be_read_says_why(tmp_path):
    folder = tmp_path / "p.murmur"
    folder.mkdir()
    with pytest.raises(ProjectError, match=r"cannot read .*p\.murmur: Is a directory"):
        load_project(folder)


def _dead_pid() -> int:
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True).stdout)  # fmt: skip


def autosave(folder: Path, pid: int, saved_at: object) -> Path:
    store = RecoveryStore(folder, pid=pid)
    store.write(Project(transcript=Transcript((Utterance(0.0, 1.0, f"from {pid}"),))), None)
    data = json.loads(store.path.read_text())
    data["recovery"]["saved_at"] = saved_at
    store.path.write_text(json.dumps(data))
    os.utime(store.path, (1_000_000.0, 1_000_000.0))
    return store.path


def test_autosaves_of_finished_sessions_are_offered_with_when_they_were_saved(tmp_path):
    now = time.time()
    dead = _dead_pid()
    autosave(tmp_path, dead, now - 60)  # a plausible time: kept
    autosave(tmp_path, 1, now - 30)  # pid 1 runs (init): that session is alive, not offered
    autosave(tmp_path, os.getpid(), now - 20)  # this very process: alive
    autosave(tmp_path, dead + 1_000_000_000, now - 10)  # no such pid can exist: finished
    autosave(tmp_path, 0, 0)  # no time at all: the file's own time
    autosave(tmp_path, -5, now + 2 * 86_400)  # in the future: the file's own time
    autosave(tmp_path, True, now + 3600)  # within a day ahead (clock skew): kept
    offered = RecoveryStore(tmp_path, pid=12345).pending()
    when = {r.project.transcript.utterances[0].text: r.saved_at for r in offered}
    assert [r.saved_at for r in offered] == sorted(when.values(), reverse=True)  # newest first
    assert when == pytest.approx({
        "from True": now + 3600, f"from {dead + 1_000_000_000}": now - 10, f"from {dead}": now - 60,
        "from 0": 1e6, "from -5": 1e6,
    })  # fmt: skip


def test_chunks_are_numbered_in_order_when_read_back(tmp_path):
    path = tmp_path / "p.murmur"
    save_project(Project(chunks=(Chunk(0, 0.0, 30.0), Chunk(1, 29.0, 60.0))), path)
    assert load_project(path).chunks == (Chunk(0, 0.0, 30.0), Chunk(1, 29.0, 60.0))
