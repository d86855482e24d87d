"""Known voices through the real `murmur` command: two espeak-ng meetings of the same people,
transcribed by whisper with the embedded diarizer; a voice remembered from the first transcript is
named in the second; a removed voice is not named again; a damaged library stops nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def run(*args: str, env: dict[str, str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)  # fmt: skip


def reference_turns(rttm: Path) -> list[tuple[float, float, str]]:
    rows = [line.split() for line in rttm.read_text().splitlines() if line.startswith("SPEAKER")]
    return [(float(r[3]), float(r[3]) + float(r[4]), r[7]) for r in rows]


def speaker_of(transcript: dict, turns: list[tuple[float, float, str]], person: str) -> dict:
    """The transcript's speaker entry that overlaps `person`'s reference turns most."""
    overlap: dict[str, float] = {}
    for u in transcript["utterances"]:
        for a, b, who in turns:
            if who == person and u["speaker"]:
                overlap[u["speaker"]] = overlap.get(u["speaker"], 0.0) + max(
                    0.0, min(b, u["end"]) - max(a, u["start"])
                )
    best = max(overlap, key=lambda k: overlap[k])
    return next(s for s in transcript["speakers"] if s["id"] == best)


@pytest.fixture(scope="module")
def meetings(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("known-voices")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
           "XDG_DATA_HOME": str(folder / "data"), "HOME": str(folder / "home")}  # fmt: skip
    (folder / "home").mkdir()
    for name, seed in (("monday", 1), ("tuesday", 2)):
        (folder / name).mkdir()
        made = run("-m", "engine.synth", f"{name}/{name}", "--speakers", "3", "--minutes", "1", "--seed",
                   str(seed), env=env, cwd=folder)  # fmt: skip
        assert made.returncode == 0, made.stderr
    done = run(
        "-m", "engine", "transcribe", "monday/monday.flac", "--format", "json", "-q", env=env, cwd=folder
    )
    assert done.returncode == 0, done.stderr
    return {"folder": folder, "env": env}


def murmur(meetings: dict, *args: str) -> subprocess.CompletedProcess[str]:
    return run("-m", "engine", *args, env=meetings["env"], cwd=meetings["folder"])


def transcript(meetings: dict, name: str) -> dict:
    return json.loads((meetings["folder"] / name / f"{name}.json").read_text())


def test_a_voice_remembered_from_one_transcript_is_named_in_another_recording(meetings):
    folder = meetings["folder"]
    monday = transcript(meetings, "monday")
    for person in ("alice", "bob"):
        label = speaker_of(monday, reference_turns(folder / "monday" / "monday.rttm"), person)["name"]
        added = murmur(meetings, "voices", "add", person.capitalize(), "--from", "monday/monday.json",
                       "--speaker", label)  # fmt: skip
        assert added.returncode == 0, added.stderr
        assert added.stdout.startswith(f"remembered {person.capitalize()}: ")
    library = folder / "data" / "murmur" / "voices.sqlite"  # the default library, in the data folder
    assert library.is_file() and not list((folder / "home").rglob("*.sqlite"))
    listed = murmur(meetings, "voices", "list")
    assert listed.stdout.splitlines()[0].startswith("Alice: ") and "from monday.flac" in listed.stdout

    named = murmur(meetings, "transcribe", "tuesday/tuesday.flac", "--format", "json", "-q", "--voices")
    assert named.returncode == 0, named.stderr
    tuesday = transcript(meetings, "tuesday")
    turns = reference_turns(folder / "tuesday" / "tuesday.rttm")
    alice, bob, carol = (speaker_of(tuesday, turns, p) for p in ("alice", "bob", "carol"))
    assert (alice["name"], bob["name"]) == ("Alice", "Bob")
    assert alice["score"] > 0.9 and bob["score"] > 0.9
    assert carol["name"].startswith("Speaker ") and "score" not in carol  # never enrolled: no name

    removed = murmur(meetings, "voices", "remove", "alice")
    assert removed.returncode == 0 and removed.stdout.startswith("removed Alice and ")
    again = murmur(meetings, "transcribe", "tuesday/tuesday.flac", "--format", "json", "-q",
                   f"--voices={library}")  # fmt: skip
    assert again.returncode == 0, again.stderr
    tuesday = transcript(meetings, "tuesday")
    names = [s["name"] for s in tuesday["speakers"]]
    assert "Alice" not in names and "Bob" in names
    assert speaker_of(tuesday, turns, "alice")["name"].startswith("Speaker ")


def test_a_damaged_library_stops_with_a_clear_error_and_is_kept(meetings, tmp_path):
    bad = tmp_path / "voices.sqlite"
    bad.write_bytes(b"not a database, but someone's file" * 100)
    before = bad.read_bytes()
    listed = murmur(meetings, "voices", "list", "--voices", str(bad))
    assert listed.returncode == 1
    assert listed.stderr.strip() == (
        f"murmur: error: {bad} is not a readable voice library (damaged, or another kind of file); it was "
        "left as it is: move it aside to start a new library, or use --voices PATH for another"
    )
    out = tmp_path / "out"
    done = murmur(meetings, "transcribe", "monday/monday.flac", "--format", "json", "-q", "--out", str(out),
                  f"--voices={bad}")  # fmt: skip
    assert done.returncode == 1 and "is not a readable voice library" in done.stderr
    assert "Traceback" not in done.stderr
    assert bad.read_bytes() == before


def test_remembering_names_the_speakers_there_are_and_the_missing_recording(meetings, tmp_path):
    wrong = murmur(meetings, "voices", "add", "Carol", "--from", "monday/monday.json", "--speaker",
                   "Speaker 9", "--voices", str(tmp_path / "v.sqlite"))  # fmt: skip
    assert wrong.returncode == 1
    assert "no speaker 'Speaker 9' in this transcript (its speakers: 'Speaker 1', " in wrong.stderr
    moved = tmp_path / "moved.json"
    moved.write_text((meetings["folder"] / "monday" / "monday.json").read_text())
    lost = murmur(meetings, "voices", "add", "Carol", "--from", str(moved), "--speaker", "Speaker 1",
                  "--voices", str(tmp_path / "v.sqlite"))  # fmt: skip
    assert lost.returncode == 1 and "give it with --recording FILE" in lost.stderr
    assert not (tmp_path / "v.sqlite").exists()


def test_a_voice_can_be_remembered_from_a_recording_of_that_person_alone(meetings, tmp_path):
    made = run("-m", "engine.synth", str(tmp_path / "alone"), "--speakers", "1", "--minutes", "1",
               env=meetings["env"], cwd=tmp_path)  # fmt: skip
    assert made.returncode == 0, made.stderr
    library = tmp_path / "v.sqlite"
    added = murmur(meetings, "voices", "add", "Alice", "--audio", str(tmp_path / "alone.flac"),
                   "--voices", str(library))  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("remembered Alice: ") and " samples from alone.flac" in added.stdout
    listed = murmur(meetings, "voices", "list", "--voices", str(library))
    assert (
        listed.stdout.startswith("Alice: ") and "from alone.flac (resemblyzer-ge2e 1; added " in listed.stdout
    )
