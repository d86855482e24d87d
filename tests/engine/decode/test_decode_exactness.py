"""The engine decodes exactly what the model says: float64 on the CPU, frozen prompt embeddings.

Without eviction its tokens equal HF `generate` (per row and in a left-padded batch); with eviction
they equal an HF forward whose explicit 4-D mask states what each token could see; batching and
refilling rows never changes a request's tokens.
"""

from __future__ import annotations

import pytest
from hf_oracle import hf_generate, hf_generate_batch, hf_masked_greedy, make_requests, tiny_qwen2

from engine.decode.api import SegmentTimes
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig, LayerRange, make_policy
from engine.decode.loop_guard import LoopGuardConfig
from engine.types import FinishReason

NO_LOOP_GUARD = LoopGuardConfig(enabled=False)
EVICTIONS = {
    "output": EvictionConfig("output", n_sink=2, output_window=5),
    "speech": EvictionConfig("speech", speech_sink=3, speech_window=6, delay=2, speech_rate=2),
    "speech-layers": EvictionConfig(
        "speech", speech_sink=3, speech_window=6, delay=2, speech_rate=2, layers=(LayerRange(1, 2, window=9),)
    ),
    "speech-one-layer": EvictionConfig(
        "speech", speech_sink=2, speech_window=4, delay=1, speech_rate=3,
        layers=(LayerRange(0, 1, keep=True),),
    ),
    "both": EvictionConfig(
        "both", n_sink=1, output_window=4, speech_sink=2, speech_window=6, delay=2, speech_rate=1
    ),
    "speech-follow": EvictionConfig(
        "speech-follow", speech_sink=1, speech_window=8, delay=3, speech_rate=1.5
    ),
    "speech-anchor": EvictionConfig("speech-anchor", speech_sink=2, look_back=3, look_ahead=5),
}


class ModTracker:
    """A stand-in timestamp reader: every token closes a segment, which starts at speech index
    (tokens read so far + token id mod 3) (the VibeVoice reader is tested on real text in
    tests/engine/vibevoice); each adds a word."""

    tokens_per_second = 7.5

    def __init__(self):
        self.seen = 0

    def feed(self, token_ids):
        found = []
        for t in token_ids:
            self.seen += 1
            found.append(SegmentTimes(self.seen + t % 3, words=1))
        return found


@pytest.fixture(scope="module")
def model():
    return tiny_qwen2()


@pytest.fixture(scope="module")
def eos(model) -> tuple[int, ...]:
    """A token the model emits part-way through the second request, so some rows stop early."""
    free = hf_generate(model, make_requests([40, 47, 35], 30)[1])
    return (free[12],)


def decode(model, requests, eos=(), anchor=ModTracker, **config):
    config = EngineConfig(loop=NO_LOOP_GUARD, **config)
    decoder = MurmurDecoder(model, config, eos_token_ids=eos, speech_anchor=anchor)
    return {r.id: r for r in decoder.decode(requests)}


def test_without_eviction_every_row_matches_hf_generate(model, eos):
    requests = make_requests([40, 47, 35, 52], [30, 30, 12, 25])
    results = decode(model, requests, eos, max_batch=2)
    for request in requests:
        expected = hf_generate(model, request, eos)
        assert results[request.id].token_ids == expected
        stopped_early = len(expected) < request.max_new_tokens
        assert results[request.id].finish_reason == (
            FinishReason.EOS if stopped_early else FinishReason.LENGTH
        )
    assert any(r.finish_reason == FinishReason.EOS for r in results.values())


def test_without_eviction_a_ragged_batch_matches_hf_generate_on_the_left_padded_batch(model, eos):
    requests = make_requests([40, 47, 35], 30)
    expected = hf_generate_batch(model, requests, eos)
    results = decode(model, requests, eos, max_batch=3)
    assert [results[r.id].token_ids for r in requests] == expected


@pytest.mark.parametrize("name", list(EVICTIONS))
def test_with_eviction_tokens_match_hf_under_the_policys_visibility_mask(model, eos, name):
    eviction = EVICTIONS[name]
    requests = make_requests([40, 47, 35], 30)
    results = decode(model, requests, eos, max_batch=2, eviction=eviction)
    for request in requests:
        layout = make_policy(eviction).layout(
            request.prompt_length, request.speech_span, request.max_new_tokens, 2
        )
        expected = hf_masked_greedy(model, request, layout, eos, ModTracker)
        assert results[request.id].token_ids == expected
        kept, last = results[request.id].stats.kv_kept_fraction, results[request.id].stats.kv_kept_last
        assert kept is not None and 0 < kept < 1 and last is not None and 0 < last < 1


def test_speech_anchor_evicts_nothing_before_the_first_timestamp(model):
    class Silent:
        tokens_per_second = 7.5

        def feed(self, token_ids):
            return []

    request = make_requests([47], 20)[0]
    anchored = decode(model, [request], anchor=Silent, eviction=EVICTIONS["speech-anchor"])[0]
    assert anchored.token_ids == decode(model, [request])[0].token_ids
    assert anchored.stats.kv_kept_fraction == 1.0 and anchored.stats.kv_kept_last == 1.0


def test_eviction_changes_what_the_model_sees(model):
    request = make_requests([47], 30)[0]
    full = decode(model, [request])[0].token_ids
    evicted = decode(model, [request], eviction=EVICTIONS["both"])[0].token_ids
    assert full != evicted  # otherwise the eviction tests above would prove nothing


def test_repetition_penalty_matches_hf_generate(model):
    requests = make_requests([40, 35], 40)
    results = decode(model, requests, max_batch=2, repetition_penalty=1.3)
    for request in requests:
        assert results[request.id].token_ids == hf_generate(model, request, repetition_penalty=1.3)


@pytest.mark.parametrize("name", ["none", "both", "speech-layers", "speech-follow", "speech-anchor"])
def test_refilled_rows_decode_the_same_tokens_as_unbatched_runs(model, eos, name):
    eviction = EVICTIONS.get(name, EvictionConfig("none"))
    requests = make_requests([40, 47, 35, 52, 30, 44], [30, 8, 30, 20, 30, 16])
    alone = {r.id: decode(model, [r], eos, eviction=eviction)[r.id] for r in requests}
    batched = decode(model, requests, eos, max_batch=2, eviction=eviction)
    assert {i: r.token_ids for i, r in batched.items()} == {i: r.token_ids for i, r in alone.items()}
    assert {i: r.finish_reason for i, r in batched.items()} == {i: r.finish_reason for i, r in alone.items()}


def test_results_report_their_cost(model):
    requests = make_requests([40, 35], 20)
    results = decode(model, requests, max_batch=2, eviction=EVICTIONS["output"])
    for request in requests:
        stats = results[request.id].stats
        assert stats.prompt_tokens == request.prompt_length
        assert stats.generated_tokens == len(results[request.id].token_ids) == 20
        assert stats.prefill_seconds > 0 and stats.decode_seconds > 0 and stats.retries == 0
    assert decode(model, requests[:1])[0].stats.kv_kept_fraction is None  # no eviction, nothing to report
