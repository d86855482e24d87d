"""The `murmur` command end to end on the bundled demo: real decoding, VAD, whisper tiny.en, exports."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import jiwer
import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "resources" / "demo"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}


def murmur(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args], capture_output=True, text=True, env=ENV, cwd=ROOT,
        timeout=timeout,
    )


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s']", " ", text.lower()).split())


def reference_text() -> str:
    lines = [line.split(maxsplit=5) for line in (DEMO / "meeting.stm").read_text().splitlines()]
    rows = sorted((float(f[3]), f[5]) for f in lines if len(f) == 6)
    return " ".join(text for _, text in rows)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("demo")
    result = murmur(
        "transcribe", str(DEMO / "meeting.flac"), "--out", str(out),
        "--format", "srt,vtt,txt,json,docx,rttm,seglst", "--profile",
    )
    return result, out


def test_profile_prints_the_seconds_of_every_stage(demo_run):
    result, _ = demo_run
    line = next(s for s in result.stderr.splitlines() if s.startswith("profile: meeting.flac"))
    stages = dict(re.findall(r"(\w+) (\d+\.\d+) s", line))
    assert {"load", "vad", "chunk", "infer", "speakers", "stitch", "total"} <= set(stages)
    assert float(stages["total"]) >= float(stages["infer"]) > 0


def test_profile_prints_the_rows_of_each_whisper_decode_call(demo_run):
    result, _ = demo_run
    line = next(s for s in result.stderr.splitlines() if "decode calls" in s)
    calls, per_call = re.search(r"decode calls (\d+), rows/call (\d+\.\d+)", line).groups()
    assert int(calls) >= 2 and 1.0 <= float(per_call) <= 2.0  # on a CPU, calls of at most 2 chunks


def test_decode_calls_counts_each_call_once_from_its_chunks():
    from engine.cli.transcribe import decode_calls

    assert decode_calls([2, 2, 2, 2, 1]) == "decode calls 3, rows/call 1.67 (first passes)"
    assert decode_calls([8] * 8) == "decode calls 1, rows/call 8.00 (first passes)"


def test_transcribing_the_demo_writes_every_format(demo_run):
    result, out = demo_run
    assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        f"meeting.{ext}" for ext in ("srt", "vtt", "txt", "json", "docx", "rttm", "seglst.json")
    )
    assert all((out / n).stat().st_size > 0 for n in names)


def test_the_demo_transcript_is_accurate(demo_run):
    result, out = demo_run
    data = json.loads((out / "meeting.json").read_text())
    hypothesis = " ".join(u["text"] for u in data["utterances"])
    wer = jiwer.wer(normalise(reference_text()), normalise(hypothesis))
    print(f"demo WER (whisper tiny.en): {wer:.3f}")
    assert wer < 0.2
    assert "Hello" not in result.stderr  # progress on stderr, transcript on stdout
    assert normalise(hypothesis)[:40] in normalise(result.stdout)


def test_utterance_times_are_absolute_ordered_and_inside_the_recording(demo_run):
    _, out = demo_run
    data = json.loads((out / "meeting.json").read_text())
    starts = [u["start"] for u in data["utterances"]]
    assert starts == sorted(starts)
    assert all(0 <= u["start"] < u["end"] <= data["duration"] + 1e-6 for u in data["utterances"])
    # the reference's last turn starts after 100 s: the stitched times must reach it
    assert starts[-1] > 100


def test_a_text_file_renamed_wav_fails_with_one_clear_line(tmp_path):
    fake = tmp_path / "notes.wav"
    fake.write_text("these are my meeting notes, not audio\n" * 50)
    result = murmur("transcribe", str(fake), "--out", str(tmp_path / "out"))
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("murmur: error:") and "notes.wav" in lines[-1]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_unknown_format_and_missing_file_are_reported(tmp_path):
    result = murmur("transcribe", str(DEMO / "meeting.flac"), "--format", "pdf")
    assert result.returncode == 1 and "unknown format" in result.stderr
    result = murmur("transcribe", str(tmp_path / "nope.mp3"))
    assert result.returncode == 1 and "nope.mp3" in result.stderr


def test_help_is_available_on_every_command():
    for args in (["--help"], ["transcribe", "--help"]):
        result = murmur(*args)
        assert result.returncode == 0 and "usage: murmur" in result.stdout


def test_ctrl_c_stops_cleanly_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine", "transcribe", str(DEMO / "meeting.flac"), "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # wait until inference has started
        if line.startswith("transcribing"):
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "cancelled" in err
    assert not out.exists() or not any(out.iterdir())
