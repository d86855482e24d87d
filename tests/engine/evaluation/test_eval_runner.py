"""Running a real system (the bundled whisper baseline) over a manifest: timing, failures, scores."""

from __future__ import annotations

import dataclasses
import json

import pytest

from engine.evaluation.manifest import Manifest
from engine.evaluation.metrics import MetricConfig
from engine.evaluation.reference import ReferenceFileError
from engine.evaluation.runner import RunOptions, evaluate
from engine.evaluation.systems import SWEEP, System, unavailable
from engine.evaluation.tables import system_table

WHISPER = System("whisper", "whisper", (("device", "cpu"),), 30.0, label="Whisper baseline", role="baseline")


@pytest.fixture(scope="module")
def run(with_broken, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    return evaluate(WHISPER, with_broken, RunOptions(MetricConfig(), out)), out


def test_the_whisper_baseline_transcribes_the_synthetic_meeting_well(run):
    report, _ = run
    good = report.recordings[0]
    assert not good.failed and good.scores.wer is not None
    assert good.scores.wer.rate < 0.3  # tiny.en on espeak speech
    assert good.facts.seconds > 0 and 0 < good.facts.rtf < 1 and good.facts.chunks >= 2
    assert report.model == "faster-whisper tiny.en"


def test_a_recording_the_system_fails_on_is_kept_with_its_error(run):
    report, _ = run
    broken = report.recordings[1]
    assert broken.failed and "broken.flac" in broken.facts.failed
    assert report.failures == 1 and len(report.scored) == 1
    assert report.pooled("wer") == report.recordings[0].scores.wer


def test_counting_failures_scores_them_as_100_percent_error(run):
    report, _ = run
    counted = report.counting_failures()
    good, broken = report.recordings
    assert broken.scores.wer.rate == 1.0 and broken.scores.der.rate == 1.0
    pooled = counted.pooled("wer")
    assert pooled.errors == good.scores.wer.errors + broken.scores.wer.length
    assert counted.macro("wer") == pytest.approx((good.scores.wer.rate + 1.0) / 2)


def test_hypotheses_and_run_facts_are_saved_and_reused(run, with_broken):
    report, out = run
    assert (out / "hyp" / "meeting-01.json").is_file() and (out / "hyp" / "meeting-01.seglst.json").is_file()
    facts = json.loads((out / "hyp" / "broken.run.json").read_text())
    assert facts["failed"] == report.recordings[1].facts.failed
    again = evaluate(WHISPER, with_broken, RunOptions(MetricConfig(), out, resume=True))
    assert [r.facts for r in again.recordings] == [r.facts for r in report.recordings]
    assert again.recordings[0].scores == report.recordings[0].scores


def test_the_report_states_its_conventions(run):
    report, _ = run
    data = report.to_dict()
    assert data["settings"]["tcpwer_collar_s"] == 5.0
    assert "±0.125 s" in data["settings"]["der_collar_meaning"]
    assert data["pooled"]["wer"]["rate"] == report.pooled("wer").rate
    assert data["recordings"][1]["failed"]
    table = system_table(report)
    assert "| meeting-01 |" in table and "| broken | 61.0 | failed |" in table and "**pooled** (1)" in table


def test_systems_that_cannot_run_are_skipped_with_the_reason(one_minute):
    wrong_option = System("odd", "whisper", (("eviction", "paper-speech"),))
    too_long = System("long", "whisper", (), chunk_seconds=60.0)
    assert "has no option(s): eviction" in unavailable(wrong_option)
    assert "at most 30 s per chunk" in unavailable(too_long)
    report = evaluate(wrong_option, one_minute)
    assert report.skipped and not report.recordings and "Skipped" in system_table(report)


def test_a_model_that_cannot_load_skips_the_system(one_minute):
    report = evaluate(System("missing", "whisper", (("model", "/no/such/model"),)), one_minute)
    assert report.skipped and "could not start" in report.skipped and "/no/such/model" in report.skipped


def test_the_sweep_covers_the_papers_configurations():
    names = [s.name for s in SWEEP]
    assert names[:2] == ["single-pass", "whisper"]
    assert [s.chunk_seconds for s in SWEEP if s.role == "sweep"] == [30, 60, 120, 300, 600]
    assert {"evict-output", "evict-speech", "evict-both"} <= set(names)
    assert next(s for s in SWEEP if s.name == "single-pass").single_pass


def test_a_bad_reference_stops_the_run_before_any_inference(one_minute, tmp_path):
    bad = tmp_path / "bad.stm"
    bad.write_text("meeting-01 1 A zero 1 hello\n")
    entry = dataclasses.replace(one_minute.entries[0], stm=bad, seglst=None)
    with pytest.raises(ReferenceFileError, match="expected a time"):
        evaluate(WHISPER, Manifest("bad", (entry,)), RunOptions(out_dir=tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_bench_list_says_a_vibevoice_system_whose_checkpoint_is_not_here_cannot_run(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    single_pass = next(s for s in SWEEP if s.name == "single-pass")
    missing = single_pass.with_options({"model": "example-org/VibeVoice-ASR-HF-absent"})
    reason = unavailable(missing)
    assert reason is not None and "is not in the Hugging Face cache" in reason and "hf download" in reason
    assert unavailable(WHISPER) is None
