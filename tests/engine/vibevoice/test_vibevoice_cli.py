"""`murmur transcribe --backend vibevoice` end to end with the trained tiny model as --model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main

ROOT = Path(__file__).resolve().parents[3]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}


def murmur(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", "transcribe", *args],
        capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=600,
    )


def assert_transcripts_match(out: Path, clips, speakers: bool) -> None:
    for path, reference in clips:
        data = json.loads((out / f"{path.stem}.json").read_text())
        got = [(u["start"], u["end"], u["text"], u["speaker"]) for u in data["utterances"]]
        assert [g[2] for g in got] == [r.text for r in reference]
        for (start, end, _, _), r in zip(got, reference, strict=True):
            assert abs(start - r.start) <= 0.006 and abs(end - r.end) <= 0.006
        if speakers:  # the same turns: one global speaker per local one, and the other way round
            pairs = {(g[3], r.speaker) for g, r in zip(got, reference, strict=True)}
            assert len(pairs) == len({p[0] for p in pairs}) == len({p[1] for p in pairs})


@pytest.mark.parametrize(
    "flags",
    [
        (),
        ("--mode", "single", "--batch-size", "2", "--dtype", "float32", "--attention", "eager",
         "--budget", "murmur", "--engine", "hf", "--acoustic", "mean", "--diarizer", "none"),
    ],
    ids=["chunked", "single-with-flags-and-the-models-own-speakers"],
)
def test_transcribing_the_clips_gives_back_their_references(trained_model, trained_clips, tmp_path, flags):
    files = [str(path) for path, _ in trained_clips]
    result = murmur(
        *files, "--backend", "vibevoice", "--model", str(trained_model), "--device", "cpu",
        "--format", "json,txt", "--out", str(tmp_path), *flags,
    )
    assert result.returncode == 0, result.stderr
    assert_transcripts_match(tmp_path, trained_clips, speakers="none" in flags)
    assert trained_clips[0][1][0].text in result.stdout  # the transcript is printed too
    assert json.loads((tmp_path / "clip0.json").read_text())["model"] == f"VibeVoice-ASR {trained_model}"


def test_a_missing_model_folder_is_one_clear_error_line(trained_clips, tmp_path, capsys):
    path, _ = trained_clips[0]
    missing = tmp_path / "nope" / "x"
    assert main(["transcribe", str(path), "--backend", "vibevoice", "--model", str(missing), "-q"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"murmur: error: --model: the folder {missing} does not exist"]  # before any decoding
    assert not (path.parent / f"{path.stem}.srt").exists()


def test_vibevoice_flags_are_refused_for_whisper(trained_clips, capsys):
    path, _ = trained_clips[0]
    assert main(["transcribe", str(path), "--dtype", "bfloat16", "-q"]) == 1
    assert "backend 'whisper' has no option(s): dtype" in capsys.readouterr().err
