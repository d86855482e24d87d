"""`murmur kv-plan`: its numbers are the engine's, and it reproduces the paper's Table 3 kept %."""

from __future__ import annotations

import json
import re

import pytest
from hf_oracle import make_requests, tiny_qwen2

from engine.cli import main
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig, LayerRange, make_policy
from engine.decode.loop_guard import LoopGuardConfig
from engine.decode.plan import SHAPES, ModelShape, chunk_layout, plan_policy, shape_from_config
from engine.errors import ModelLoadError

POLICIES = {
    "output": EvictionConfig("output", n_sink=2, output_window=5),
    "speech": EvictionConfig("speech", speech_sink=3, speech_window=6, delay=2, speech_rate=2),
    "both": EvictionConfig(
        "both", n_sink=1, output_window=4, speech_sink=2, speech_window=6, delay=2, speech_rate=1
    ),
    "speech-layers": EvictionConfig(
        "speech", speech_sink=2, speech_window=4, delay=1, speech_rate=3,
        layers=(LayerRange(0, 1, keep=True),),
    ),
    "speech-follow": EvictionConfig(
        "speech-follow", speech_sink=1, speech_window=8, delay=3, speech_rate=1.5
    ),
}


@pytest.fixture(scope="module")
def model():
    return tiny_qwen2()


@pytest.mark.parametrize("name", list(POLICIES))
def test_the_plan_matches_what_the_engine_reports_on_a_real_run(model, name):
    config = POLICIES[name]
    request = make_requests([47], 30)[0]  # no end-of-sequence token: all 30 tokens are generated
    decoder = MurmurDecoder(model, EngineConfig(eviction=config, loop=LoopGuardConfig(enabled=False)))
    (result,) = decoder.decode([request])
    assert len(result.token_ids) == 30
    shape = ModelShape(layers=2, kv_heads=2, head_dim=16, dtype_bytes=8)
    layout = make_policy(config).layout(47, request.speech_span, 30, 2)
    plan = plan_policy(name, layout, shape, batch=1)
    assert result.stats.kv_kept_last == pytest.approx(plan.kept_last, abs=1e-12)
    assert result.stats.kv_kept_fraction == pytest.approx(plan.kept_mean, abs=1e-12)
    assert result.stats.kv_peak_entries == plan.peak_entries


def test_kv_plan_reproduces_table_3_kept_percent_for_the_authors_output_eviction(capsys):
    for window, paper in ((1024, 64.9), (512, 55.1), (256, 50.0)):
        args = [
            "kv-plan",
            "--output-tokens",
            "2870",
            "--eviction",
            "output",
            "--sink",
            "4",
            "--window",
            str(window),
        ]
        assert main(args) == 0
        row = capsys.readouterr().out.split("\n\n")[0].splitlines()[-1]  # the policy table's row
        kept_last = float(row.split("|")[2])
        assert abs(kept_last - paper) <= 1.0, row


def test_kv_plan_prints_every_policy_and_speech_eviction_takes_less_memory_than_none(capsys):
    assert main(["kv-plan", "--batch-size", "16"]) == 0
    out = capsys.readouterr().out
    assert "2350 prompt tokens (2250 speech at 7.5/s)" in out
    policies = out.split("\n\n")[0]
    rows = {line.split("|")[1].strip(): line for line in policies.splitlines() if line.startswith("| ")}
    assert {"none", "paper-output", "paper-speech", "paper-both", "speech-anchor"} <= set(rows)
    ratio = float(re.search(r"\| ([0-9.]+)× \|", rows["paper-speech"]).group(1))
    assert ratio < 1.0
    shape = SHAPES["qwen2.5-7b"]
    none = plan_policy("none", chunk_layout(EvictionConfig("none"), shape, 300, 2700), shape, 16)
    assert none.row_bytes == (2350 + 2700) * 28 * 2 * 4 * 128 * 2  # every token, every layer, K and V


def test_the_shape_and_speech_rate_come_from_a_checkpoint_config(tmp_path):
    config = {
        "text_config": {"num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
                        "hidden_size": 64, "dtype": "float32"},
        "acoustic_tokenizer_encoder_config": {"downsampling_ratios": [2, 2, 4, 5, 5, 8]},
    }  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert shape_from_config(tmp_path) == ModelShape(3, 2, 16, dtype_bytes=4, speech_rate=7.5)
    with pytest.raises(ModelLoadError, match="cannot read a model config"):
        shape_from_config(tmp_path / "missing")


def test_a_transformers_5_float32_checkpoint_is_planned_with_4_byte_kv(tmp_path, capsys):
    config = {"dtype": "float32", "text_config": {"num_hidden_layers": 2, "num_attention_heads": 2,
              "hidden_size": 32, "dtype": "bfloat16"}}  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert shape_from_config(tmp_path).dtype_bytes == 4
    assert main(["kv-plan", "--model", str(tmp_path), "--chunk-seconds", "10"]) == 0
    assert "4-byte KV" in capsys.readouterr().out
    assert main(["kv-plan", "--model", str(tmp_path), "--chunk-seconds", "10", "--dtype", "bfloat16"]) == 0
    assert "2-byte KV" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--batch-size", "0"], "--batch-size must be positive"),
        (["--model", "/nonexistent"], "cannot read a model config at /nonexistent"),
        (["--model", "BROKEN"], "is not a usable model config (missing 'num_attention_heads')"),
        (["--model", "NOTJSON"], "is not a usable model config"),
    ],
)
def test_kv_plan_typos_print_one_line_and_exit_1(tmp_path, capsys, args, message):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text('{"text_config": {"hidden_size": 8}}')
    (tmp_path / "notjson").mkdir()
    (tmp_path / "notjson" / "config.json").write_text("{oops")
    paths = {"BROKEN": str(tmp_path / "broken"), "NOTJSON": str(tmp_path / "notjson")}
    assert main(["kv-plan", *(paths.get(a, a) for a in args)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("murmur: error: ") and message in err and len(err.strip().splitlines()) == 1


def test_kv_plan_shows_speech_lost_and_rows_admitted_on_h200_and_h100(capsys):
    assert main(["kv-plan", "--eviction", "none", "paper-speech", "speech-anchor"]) == 0
    out = capsys.readouterr().out
    tables = [line for line in out.splitlines() if line.startswith("| ")]
    lost = {line.split("|")[1].strip(): float(line.split("|")[4]) for line in tables[1:4]}
    assert lost["none"] == 0.0 and lost["speech-anchor"] == 0.0 and 30 < lost["paper-speech"] < 40
    assert "H200 141 GB: rows" in tables[4] and "H100 80 GB: rows" in tables[4]
    rows = {line.split("|")[1].strip(): line.split("|") for line in tables[5:]}
    h200, h100 = {k: int(v[2]) for k, v in rows.items()}, {k: int(v[5]) for k, v in rows.items()}
    assert h200["speech-anchor"] >= 1.25 * h200["none"] and h100["speech-anchor"] >= 1.25 * h100["none"]
    assert h200["none"] > h100["none"] > 0
    assert out.count("warning: paper-speech evicts about") == 1 and "warning: speech-anchor" not in out


def test_front_speech_eviction_needs_less_kv_memory_per_row_than_none(model):
    from engine.errors import OutOfMemoryError

    request = make_requests([70], 100, head=4, tail=5)[0]  # 61 speech tokens, 100 outputs
    speech = EvictionConfig("speech", speech_sink=1, speech_window=4, delay=0, speech_rate=8)
    slot_bytes = 2 * 2 * 2 * 16 * 8  # K and V, 2 layers, 2 KV heads, head size 16, float64
    limit = 160 * slot_bytes  # between what the row needs with eviction (114 entries) and without (170)
    config = {"loop": LoopGuardConfig(enabled=False), "max_batch": 1, "kv_memory_limit": limit}
    (result,) = MurmurDecoder(model, EngineConfig(eviction=speech, **config)).decode([request])
    assert len(result.token_ids) == 100 and result.stats.kv_peak_entries == 2 * (70 - 56 + 100 - 1)
    with pytest.raises(OutOfMemoryError):
        list(MurmurDecoder(model, EngineConfig(**config)).decode([request]))


def test_kv_plan_shows_table_4_with_the_authors_batch_minimum_cap_next_to_the_papers_figures(capsys):
    assert main(["kv-plan", "--table4", "--output-tokens", "2869"]) == 0
    rows = [line.split("|") for line in capsys.readouterr().out.splitlines() if line.startswith("| ")][1:]
    assert [r[1].strip() for r in rows] == ["256 / 1024", "512 / 1024", "256 / 1538", "512 / 1538"]
    for row in rows:
        paper, compat, per_row = (float(row[i]) for i in (2, 3, 4))
        assert abs(compat - paper) < 1.5  # the authors' batching reproduces the paper's kept %
        assert per_row < paper - 5  # this engine's per-row cap keeps far less
