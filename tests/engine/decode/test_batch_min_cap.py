"""The authors' batch-minimum cap as a decode mode: rows decoded together drop at most what the
batch's shortest speech span allows (their `cap = span_min − sink − window`), so a long chunk keeps
what its shortest batch mate keeps; the per-row cap (each row's own span) stays the default."""

from __future__ import annotations

import math

import pytest
from hf_oracle import hf_masked_greedy, make_requests, tiny_qwen2
from test_decode_exactness import NO_LOOP_GUARD

from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig, make_policy

SPEECH = {"speech_sink": 2, "speech_window": 4, "delay": 2, "speech_rate": 2}


@pytest.fixture(scope="module")
def model():
    return tiny_qwen2()


def authors_dropped(t: int, span_min: int, sink: int, window: int, delay: int, rate: float) -> int:
    """Speech tokens the authors' `SpeechWindowLayer` has dropped after t decoded tokens, its cap
    taken from the batch's shortest speech span (`_target_evict`)."""
    return min(math.floor(rate * max(t - delay, 0)), max(span_min - sink - window, 0))


def decode(model, requests, batch: int, **eviction):
    config = EngineConfig(max_batch=batch, loop=NO_LOOP_GUARD, eviction=EvictionConfig("speech", **eviction))
    return {r.id: r for r in MurmurDecoder(model, config).decode(requests)}, config


def expected_kept(request, result, span_min: int) -> float:
    """Kept / logical KV at the row's last step under the authors' rule (all layers alike)."""
    steps = len(result.token_ids) - 1  # the last token is never fed back
    logical = request.prompt_length + steps
    dropped = authors_dropped(steps, span_min, SPEECH["speech_sink"], SPEECH["speech_window"], 2, 2)
    return 1 - dropped / logical


def spans(requests):
    return [end - start for start, end in (r.speech_span for r in requests)]


def test_a_batch_admitted_at_once_keeps_what_the_authors_batch_minimum_keeps(model):
    requests = make_requests([40, 47, 25], 30)  # speech spans 31, 38, 16
    results, config = decode(model, requests, 3, speech_cap="batch-min", **SPEECH)
    shortest = min(spans(requests))
    for request in requests:
        assert results[request.id].stats.kv_kept_last == pytest.approx(
            expected_kept(request, results[request.id], shortest)
        )
        layout = make_policy(config.eviction).layout(
            request.prompt_length, request.speech_span, request.max_new_tokens, 2, shortest
        )
        assert results[request.id].token_ids == hf_masked_greedy(model, request, layout)


def test_per_row_caps_stay_the_default(model):
    requests = make_requests([40, 47, 25], 30)
    results, config = decode(model, requests, 3, **SPEECH)
    assert config.eviction.speech_cap == "row"
    for request, span in zip(requests, spans(requests), strict=True):
        assert results[request.id].stats.kv_kept_last == pytest.approx(
            expected_kept(request, results[request.id], span)
        )
    assert (
        results[1].stats.kv_kept_last
        < decode(model, requests, 3, speech_cap="batch-min", **SPEECH)[0][1].stats.kv_kept_last
    )


def test_a_row_takes_the_shortest_span_of_the_rows_it_joins_and_keeps_its_cap(model):
    requests = make_requests([47, 25, 40], [30, 10, 30])  # spans 38, 16, 31; the short row leaves early
    results, _ = decode(model, requests, 2, speech_cap="batch-min", **SPEECH)
    joined = {0: 16, 1: 16, 2: 31}  # row 2 joins row 0 (38) after the short row left: its own span
    for request in requests:
        result = results[request.id]
        assert result.stats.kv_kept_last == pytest.approx(expected_kept(request, result, joined[request.id]))


def test_the_command_line_names_the_cap_and_refuses_an_unknown_one(capsys):
    from engine.cli import build_parser
    from engine.cli.option_args import recipe_of

    parser = build_parser()
    argv = ["transcribe", "a.wav", "--backend", "vibevoice", "--eviction", "speech"]
    argv += ["--speech-cap", "batch-min"]
    config = recipe_of(parser.parse_args(argv), "transcribe").backend_config.decode
    assert config.eviction.batch_min and "batch-minimum cap" in config.eviction.describe()
    with pytest.raises(SystemExit):
        parser.parse_args(["transcribe", "a.wav", "--speech-cap", "batch"])
    with pytest.raises(ValueError, match="unknown speech cap"):
        EvictionConfig("speech", speech_cap="batch")
