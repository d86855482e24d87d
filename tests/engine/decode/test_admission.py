"""Admission never waits for the device: a row joins the batch with its first token on the device,
and the host learns it from the step that fed it (one read per step). Tokens and stop rules are
what they were when admission read the first token at once."""

from __future__ import annotations

import pytest
import torch
from hf_oracle import hf_generate, hf_masked_greedy, make_requests, tiny_qwen2
from test_decode_exactness import EVICTIONS, NO_LOOP_GUARD, ModTracker

from engine.decode import runner as runner_module
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import make_policy
from engine.decode.runner import PendingTokens, Runner
from engine.types import FinishReason

HOST_READS = ("item", "tolist", "numpy", "__int__", "__index__", "__float__", "__bool__")


@pytest.fixture(scope="module")
def model():
    return tiny_qwen2()


@pytest.fixture(scope="module")
def requests():
    """Ragged prompts; two with a budget of one token; more than the batch, so rows join mid-batch."""
    return make_requests([40, 47, 35, 52, 30, 44, 38], [30, 1, 30, 20, 1, 16, 25])


@pytest.fixture(scope="module")
def eos(model, requests) -> tuple[int, ...]:
    """The first token of the third request: that row ends on its first token."""
    return (hf_generate(model, requests[2])[0],)


def decode(model, requests, eos, loop=NO_LOOP_GUARD, **config):
    decoder = MurmurDecoder(
        model, EngineConfig(loop=loop, **config), eos_token_ids=eos, speech_anchor=ModTracker
    )
    return {r.id: r for r in decoder.decode(requests)}, decoder


def test_rows_joining_mid_batch_decode_what_hf_generate_decodes(model, requests, eos):
    results, _ = decode(model, requests, eos, max_batch=2)
    for request in requests:
        expected = hf_generate(model, request, eos)
        assert results[request.id].token_ids == expected
        ended = FinishReason.EOS if len(expected) < request.max_new_tokens else FinishReason.LENGTH
        assert results[request.id].finish_reason == ended
    assert results[2].token_ids == () and results[2].finish_reason == FinishReason.EOS
    assert len(results[1].token_ids) == len(results[4].token_ids) == 1


@pytest.mark.parametrize("name", ["both", "speech-anchor"])
def test_under_eviction_a_first_token_stop_ends_the_row_as_if_it_never_stepped(model, requests, eos, name):
    eviction = EVICTIONS[name]
    results, _ = decode(model, requests, eos, max_batch=2, eviction=eviction)
    for request in requests:
        layout = make_policy(eviction).layout(
            request.prompt_length, request.speech_span, request.max_new_tokens, 2
        )
        assert results[request.id].token_ids == hf_masked_greedy(model, request, layout, eos, ModTracker)
    for stopped in (results[1], results[2], results[4]):  # a one-token budget, an EOS first token
        assert stopped.stats.kv_kept_fraction is None and stopped.stats.decode_seconds == 0
    assert results[0].stats.kv_kept_fraction is not None


def test_the_loop_guard_sees_the_same_tokens_when_first_tokens_arrive_with_a_step(model, requests, eos):
    guarded, _ = decode(model, requests, eos, loop=EngineConfig().loop, max_batch=2)
    alone = {r.id: decode(model, [r], eos, loop=EngineConfig().loop)[0][r.id] for r in requests}
    assert {i: (r.token_ids, r.finish_reason) for i, r in guarded.items()} == {
        i: (r.token_ids, r.finish_reason) for i, r in alone.items()
    }


def test_admission_reads_nothing_back_from_the_device(model, requests, eos, monkeypatch):
    """Every host read of a tensor during an admission (its prefill aside) is counted; the step's
    read-back is the only one, once per step."""
    reads: list[str] = []
    admitting = [False]

    def count(name):
        original = getattr(torch.Tensor, name)

        def read(self, *args, **kwargs):
            if admitting[0]:
                reads.append(name)
            return original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, read)

    for name in HOST_READS:
        count(name)
    admit, prefill, read_back = Runner.admit, runner_module.prefill, PendingTokens.read
    steps_read = [0]

    def admitted(self, *args):
        admitting[0] = True
        try:
            return admit(self, *args)
        finally:
            admitting[0] = False

    def prefilled(*args):  # the model's own forward is not the admission's doing
        admitting[0] = False
        try:
            return prefill(*args)
        finally:
            admitting[0] = True

    def read_once(self):
        steps_read[0] += 1
        return read_back(self)

    monkeypatch.setattr(Runner, "admit", admitted)
    monkeypatch.setattr(runner_module, "prefill", prefilled)
    monkeypatch.setattr(PendingTokens, "read", read_once)
    results, decoder = decode(model, requests, eos, max_batch=2)
    assert len(results) == len(requests)
    assert reads == []
    assert steps_read[0] == decoder.stats.steps
