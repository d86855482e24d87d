"""A benchmark sweep: shared models, the comparison table with speed-ups, skipped systems, plots."""

from __future__ import annotations

import json

import pytest

from engine.evaluation.bench import run_bench, write_bench
from engine.evaluation.runner import RunOptions
from engine.evaluation.systems import System

PNG = b"\x89PNG\r\n\x1a\n"
SYSTEMS = [
    System("whisper", "whisper", (("device", "cpu"),), 30.0, label="Whisper baseline", role="baseline"),
    System("vv-like", "whisper", (("eviction", "paper-speech"),), 30.0, label="not possible"),
    System("whisper-20", "whisper", (("device", "cpu"),), 20.0, label="20 s chunks", role="sweep"),
]


@pytest.fixture(scope="module")
def bench(one_minute, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    report = run_bench(SYSTEMS, one_minute, RunOptions(out_dir=out), baseline="whisper")
    return report, out, write_bench(report, out)


def test_every_system_is_reported_in_order_and_the_impossible_one_is_skipped(bench):
    report, _, _ = bench
    assert [r.system.name for r in report.reports] == [s.name for s in SYSTEMS]
    assert [r.skipped is None for r in report.reports] == [True, False, True]
    assert "eviction" in report.reports[1].skipped


def test_the_table_has_the_papers_columns_speed_ups_and_skips(bench):
    report, _, _ = bench
    table = report.table()
    assert table.splitlines()[0] == (
        "| System | chunk (s) | WER (%) | DER (%) | cpWER (%) | tcpWER (%) | kept % | speech lost "
        "| Total (s) | Speed-up |"
    )
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines()[2:4]}
    assert rows["Whisper baseline"].endswith("| baseline |")
    expected = f"{report.reports[0].total_seconds / report.reports[2].total_seconds:.2f}×"
    assert rows["20 s chunks"].startswith("| 20 s chunks | 20 |") and rows["20 s chunks"].endswith(
        f"| {expected} |"
    )
    assert "- `vv-like`: backend 'whisper' has no option(s): eviction" in table


def test_systems_differing_only_in_chunking_share_the_model_and_score_alike(bench):
    report, _, _ = bench
    first, _, second = report.reports
    assert abs(first.pooled("wer").rate - second.pooled("wer").rate) < 0.1


def test_bench_files_and_plots_are_written(bench):
    report, out, written = bench
    names = sorted(p.name for p in written)
    assert names == sorted(
        ["bench.json", "bench.md", "wer.png", "der.png", "cpwer.png", "tcpwer.png", "latency.png"]
    )
    assert all(p.read_bytes().startswith(PNG) for p in written if p.suffix == ".png")
    data = json.loads((out / "bench.json").read_text())
    assert [s["system"]["name"] for s in data["systems"]] == [s.name for s in SYSTEMS]
    assert (out / "whisper" / "eval.json").is_file() and (
        out / "whisper" / "hyp" / "meeting-01.json"
    ).is_file()
    assert report.table() in (out / "bench.md").read_text()


def test_a_missing_baseline_leaves_speed_up_blank_with_a_note(bench):
    report, _, _ = bench
    table = type(report)(report.dataset, report.reports, baseline="single-pass").table()
    assert "Speed-up is over `single-pass`, which did not run" in table
    assert "| baseline |" not in table


def test_speaker_flags_reach_every_system_of_a_sweep(tmp_path):
    from engine.cli import build_parser
    from engine.cli.bench import chosen_systems
    from engine.evaluation.systems import read_systems, to_dict

    args = build_parser().parse_args(
        ["bench", str(tmp_path / "manifest.json"), "--speakers", "4", "--diarizer", "embedded"]
    )
    systems = chosen_systems(args)
    assert systems and all(s.pipeline_config().speakers.num_speakers == 4 for s in systems)
    saved = tmp_path / "systems.json"
    saved.write_text(json.dumps([to_dict(s) for s in systems]))
    assert read_systems(saved) == systems  # speaker settings survive a systems file


def test_paper_switches_reach_every_system_and_survive_a_systems_file(tmp_path):
    from engine.cli import build_parser
    from engine.cli.bench import chosen_systems
    from engine.evaluation.systems import read_systems, to_dict

    args = build_parser().parse_args(
        ["bench", str(tmp_path / "m.json"), "--loop-recovery", "off", "--inversions", "drop"]
    )
    systems = chosen_systems(args)
    vibevoice = [s for s in systems if s.backend == "vibevoice"]
    assert vibevoice and all(s.backend_options()["loop_recovery"] is False for s in vibevoice)
    assert all(s.pipeline_config().stitch.inversions == "drop" for s in systems)
    saved = tmp_path / "systems.json"
    saved.write_text(json.dumps([to_dict(s) for s in systems]))
    assert read_systems(saved) == systems
    defaults = chosen_systems(build_parser().parse_args(["bench", str(tmp_path / "m.json")]))
    assert all("loop_recovery" not in s.backend_options() for s in defaults)


def test_the_sweep_separates_engine_speed_ups_from_eviction_speed_ups():
    from engine.evaluation.systems import SWEEP

    by_name = {s.name: s.backend_options() for s in SWEEP}
    assert by_name["chunk-300"]["engine"] == "hf" and by_name["murmur-300"] == {"engine": "murmur"}
    assert by_name["evict-anchor"]["eviction"] == "speech-anchor"
    s512 = by_name["evict-speech-s512"]
    assert (s512["eviction"], s512["speech_sink"], s512["delay"], s512["window"]) == ("speech", 512, 32, 1024)


def test_the_papers_table_4_rows_are_reachable_by_name_but_not_in_the_default_sweep(tmp_path):
    from engine.cli import build_parser
    from engine.cli.bench import chosen_systems

    manifest = str(tmp_path / "m.json")
    defaults = {s.name for s in chosen_systems(build_parser().parse_args(["bench", manifest]))}
    args = build_parser().parse_args(["bench", manifest, "--systems", "table4-256-1538,evict-speech"])
    (row, speech) = chosen_systems(args)
    assert not any(name.startswith("table4-") for name in defaults)
    assert row.name == "table4-256-1538" and speech.name == "evict-speech"
    kept = row.recipe.backend_config.decode.eviction  # what the engine is given
    settings = (kept.policy, kept.delay, kept.speech_window, kept.speech_sink, kept.speech_rate)
    assert settings == ("speech", 256, 1538, 32, 8)
    assert kept.speech_cap == "batch-min"  # the authors' batching, what their Table 4 ran
    (per_row,) = chosen_systems(
        build_parser().parse_args(["bench", manifest, "--systems", "table4-256-1538-row"])
    )
    assert per_row.backend_options()["speech_cap"] == "row"


def test_kept_percent_is_pooled_over_chunks_next_to_its_macro_mean():
    from engine.evaluation.metrics import MetricConfig, Scores
    from engine.evaluation.report import RecordingResult, RunFacts, SystemReport
    from engine.evaluation.systems import System
    from engine.evaluation.tables import comparison_table

    facts = RunFacts(60.0, 6.0, kv=((0.5, 0.8, 1000), (0.8, 0.9, 3000)))
    recording = RecordingResult("m1", facts, Scores())
    report = SystemReport(System("e", "vibevoice"), "d", MetricConfig(), "n", (recording,))
    kept = report.kept()
    assert kept == pytest.approx(
        {"last_pooled": (500 + 2400) / 4000, "last_macro": 0.65, "steps_macro": 0.85}
    )
    assert RunFacts.from_dict(facts.to_dict()) == facts
    row = comparison_table([report], baseline=None).splitlines()[2]
    assert "| 72.5 / 65.0 |" in row
    plain = SystemReport(
        System("p", "vibevoice"),
        "d",
        MetricConfig(),
        "n",
        (RecordingResult("m1", RunFacts(60.0, 6.0), Scores()),),
    )
    assert plain.kept() is None and "| – |" in comparison_table([plain], baseline=None).splitlines()[2]


def test_the_bench_table_shows_the_speech_lost_and_the_chunks_whose_anchor_stopped():
    from engine.evaluation.metrics import MetricConfig, Scores
    from engine.evaluation.report import RecordingResult, RunFacts, SystemReport
    from engine.evaluation.systems import System
    from engine.evaluation.tables import comparison_table

    facts = RunFacts(60.0, 6.0, lost=((1.5, 30.0), (0.0, 30.0)), anchor_stopped=1)
    report = SystemReport(
        System("a", "vibevoice"), "d", MetricConfig(), "n", (RecordingResult("m1", facts, Scores()),)
    )
    assert report.lost() == {"seconds": 1.5, "fraction": 0.025, "anchor_stopped": 1}
    assert RunFacts.from_dict(facts.to_dict()) == facts
    row = comparison_table([report], baseline=None).splitlines()[2]
    assert "| 1.5 s (2.5 %); anchor stopped in 1 chunk(s) |" in row


def test_eviction_variants_at_one_chunk_size_are_drawn_apart_not_on_top_of_each_other():
    from engine.evaluation.plots import marker_x

    systems = [
        System("murmur-300", "vibevoice", (), 300.0, role="sweep"),
        System("evict-output", "vibevoice", (), 300.0),
        System("evict-both", "vibevoice", (), 300.0),
        System("chunk-60", "vibevoice", (), 60.0, role="sweep"),
        System("single-pass", "vibevoice", (), None, single_pass=True, role="baseline"),
    ]
    xs = marker_x(systems)
    at_300 = [xs["murmur-300"], xs["evict-output"], xs["evict-both"]]
    assert len(set(at_300)) == 3 and at_300 == sorted(at_300)  # one each, in the legend's order
    assert all(300.0 <= x < 300.0 * 1.2 for x in at_300)  # still read as 300 s on the log axis
    assert xs["chunk-60"] == 60.0 and "single-pass" not in xs
