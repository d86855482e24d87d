"""The fused decode step is the model's own arithmetic: its weights are views of the model's (never
a second copy), its per-step logits equal an HF forward over the same tokens in float64, and the
compiled glue (what runs on CUDA) chooses the same tokens as the plain one."""

from __future__ import annotations

import pytest
import torch
from gpu_parts import forced_logits
from hf_oracle import make_requests, tiny_qwen2

from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.loop_guard import LoopGuardConfig

NO_LOOPS = LoopGuardConfig(enabled=False)


def test_fused_weights_are_views_of_the_models_weights_and_built_once():
    model = tiny_qwen2()
    attn, mlp = model.model.layers[0].self_attn, model.model.layers[0].mlp
    before = attn.q_proj.weight.detach().clone()
    first = MurmurDecoder(model).fused.layers[0]
    shares = first.qkv_t.untyped_storage().data_ptr() == attn.q_proj.weight.untyped_storage().data_ptr()
    assert (
        shares
        and first.gate_up_t.untyped_storage().data_ptr() == mlp.up_proj.weight.untyped_storage().data_ptr()
    )
    assert torch.equal(attn.q_proj.weight, before)  # same values, now a view
    second = MurmurDecoder(model).fused.layers[0]
    assert second.qkv_t.data_ptr() == first.qkv_t.data_ptr()  # a second decoder copies nothing


@pytest.mark.parametrize("graphs", [False, True], ids=["eager", "captured"])
def test_fused_step_logits_equal_the_hf_forward_in_float64(graphs):
    model = tiny_qwen2()
    requests = make_requests([40, 47], 12)
    config = EngineConfig(max_batch=2, loop=NO_LOOPS, emulate_graphs=graphs)
    ours, theirs = forced_logits(model, requests, 12, config)
    torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-9)


@pytest.mark.slow
def test_compiled_glue_chooses_the_tokens_the_plain_glue_chooses():
    model = tiny_qwen2(dtype=torch.float32)
    requests = [
        type(r)(r.id, r.inputs_embeds.float(), r.speech_span, r.max_new_tokens)
        for r in make_requests([40, 47, 35], 12)
    ]
    tokens = {}
    for glue in ("plain", "compiled"):
        config = EngineConfig(max_batch=2, glue=glue, emulate_graphs=True, loop=NO_LOOPS)
        tokens[glue] = {r.id: r.token_ids for r in MurmurDecoder(model, config).decode(requests)}
    assert tokens["compiled"] == tokens["plain"]


def test_a_glue_that_fails_to_compile_falls_back_to_the_plain_one(monkeypatch):
    def broken(fn, **kwargs):
        def run(*args):
            raise RuntimeError("no compiler here")

        return run

    monkeypatch.setattr(torch, "compile", broken)
    model = tiny_qwen2()
    requests = make_requests([40, 47], 10)
    plain = {r.id: r.token_ids for r in MurmurDecoder(model, EngineConfig(loop=NO_LOOPS)).decode(requests)}
    with pytest.warns(UserWarning, match="using the plain one"):
        config = EngineConfig(loop=NO_LOOPS, glue="compiled")
        fallback = {r.id: r.token_ids for r in MurmurDecoder(model, config).decode(requests)}
    assert fallback == plain
