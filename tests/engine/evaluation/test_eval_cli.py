"""`murmur synth-corpus`, `murmur eval` and `murmur bench` end to end, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}


def murmur(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", *map(str, args)],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    corpus, out = tmp_path_factory.mktemp("corpus"), tmp_path_factory.mktemp("out")
    made = murmur(
        "synth-corpus", corpus, "--recordings", "1", "--minutes", "1", "--speakers", "3", "--seed", "4"
    )
    evaluated = murmur("eval", corpus / "manifest.json", "--out", out / "whisper", "--der-collar", "0")
    return corpus, out, made, evaluated


def test_synth_corpus_writes_a_manifest(session):
    corpus, _, made, _ = session
    assert made.returncode == 0, made.stderr
    assert "manifest" in made.stdout and (corpus / "manifest.json").is_file()
    assert (corpus / "meeting-01.flac").is_file() and (corpus / "meeting-01.words.json").is_file()


def test_eval_prints_the_table_and_writes_json_and_markdown(session):
    _, out, _, evaluated = session
    assert evaluated.returncode == 0, evaluated.stderr
    assert "| meeting-01 |" in evaluated.stdout and "**pooled** (1)" in evaluated.stdout
    data = json.loads((out / "whisper" / "eval.json").read_text())
    assert data["system"]["backend"] == "whisper" and data["settings"]["der_collar_s"] == 0.0
    assert data["pooled"]["wer"]["rate"] < 0.3
    assert (out / "whisper" / "eval.md").read_text().startswith("## whisper on ")


def test_bench_reuses_hypotheses_and_lists_what_it_could_not_run(session):
    corpus, out, _, _ = session
    systems = out / "systems.json"
    odd = {"name": "odd", "backend": "whisper", "options": {"colour": "blue"}, "label": "Odd"}
    whisper = {
        "name": "whisper",
        "backend": "whisper",
        "chunk_seconds": 30,
        "label": "Whisper",
        "role": "baseline",
    }
    systems.write_text(json.dumps([whisper, odd]))
    benched = murmur("bench", corpus / "manifest.json", "--systems-file", systems, "--out", out, "--resume")
    assert benched.returncode == 0, benched.stderr
    lines = benched.stdout.splitlines()
    assert lines[0].startswith("| System | chunk (s) | WER (%) | DER (%) | cpWER (%) | tcpWER (%)")
    assert any(line.startswith("| Whisper | 30 |") for line in lines)
    assert "- `odd`: backend 'whisper' has no option(s): colour" in benched.stdout
    assert sorted(p.name for p in (out / "plots").iterdir()) == [
        "cpwer.png", "der.png", "latency.png", "tcpwer.png", "wer.png",
    ]  # fmt: skip
    bench = json.loads((out / "bench.json").read_text())
    whisper = next(s for s in bench["systems"] if s["system"]["name"] == "whisper")
    eval_json = json.loads((out / "whisper" / "eval.json").read_text())
    assert whisper["total_seconds"] == eval_json["total_seconds"]


def test_bench_list_shows_each_system_and_whether_it_can_run():
    listed = murmur("bench", "unused.json", "--list")
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert names[:3] == ["single-pass", "whisper", "chunk-30"] and "evict-speech" in names
    assert "whisper" in listed.stdout and "ready" in listed.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["eval", "missing.json"], "cannot read manifest"),
        (["eval", "{empty}", "--dataset", "ami-ihm"], "no audio or no reference found for 16"),
        (["bench", "x.json", "--systems", "nope"], "unknown system(s) nope"),
        (["synth-corpus", "/tmp/x", "--speakers", "2-99"], "speakers must be a range"),
    ],
)
def test_user_errors_give_one_line_and_exit_1(args, message, tmp_path):
    result = murmur(*(a.format(empty=tmp_path) for a in args))
    assert result.returncode == 1 and message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_bench_on_a_ten_minute_meeting_produces_the_table_and_plots(tmp_path):
    made = murmur("synth-corpus", tmp_path / "c", "--recordings", "1", "--minutes", "10", "--speakers", "4")
    assert made.returncode == 0, made.stderr
    systems = "single-pass,whisper,chunk-300,evict-speech"
    benched = murmur(
        "bench", tmp_path / "c" / "manifest.json", "--systems", systems, "--out", tmp_path / "b",
        "--set", f"vibevoice.model={tmp_path / 'no-such-model'}", timeout=900,
    )  # fmt: skip
    assert benched.returncode == 0, benched.stderr
    row = next(line for line in benched.stdout.splitlines() if line.startswith("| Whisper baseline"))
    pooled, macro = (float(x) for x in row.split(" | ")[2].split(" / "))  # WER (%): pooled / macro
    assert pooled < 25.0 and macro < 25.0  # tiny.en on a clean synthetic meeting
    assert len(list((tmp_path / "b" / "plots").glob("*.png"))) == 5
    for name in ("single-pass", "chunk-300", "evict-speech"):  # skipped with a reason, never dropped
        assert f"- `{name}`: " in benched.stdout
