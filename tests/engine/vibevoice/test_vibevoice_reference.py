"""The reference decoder (transformers generate): batching changes nothing; each row stops for its reason."""

from __future__ import annotations

import threading

import pytest
import torch

from engine.backends.vibevoice.config import VibeVoiceConfig
from engine.backends.vibevoice.decoders import DECODERS, create_decoder
from engine.backends.vibevoice.loading import load_model
from engine.backends.vibevoice.reference import GenerateConfig, GenerateDecoder
from engine.decode.api import DecodeRequest
from engine.decode.loop_guard import LoopGuardConfig
from engine.errors import Cancelled, ModelLoadError
from engine.types import FinishReason

NEVER = (10**6,)  # an end token the model cannot write: rows run to their budgets


def requests(loaded, lengths=(30, 45, 12), budget=20) -> list[DecodeRequest]:
    """Prompts of different lengths made of real token embeddings."""
    gen = torch.Generator().manual_seed(0)
    embed = loaded.model.get_input_embeddings()
    with torch.no_grad():
        return [
            DecodeRequest(i, embed(torch.randint(7, 500, (n,), generator=gen)), (0, 0), budget)
            for i, n in enumerate(lengths)
        ]


def decode(loaded, reqs, batch=3, eos=NEVER, **kwargs) -> dict[int, object]:
    decoder = GenerateDecoder(loaded.model, GenerateConfig(max_batch=batch), eos_token_ids=eos)
    return {r.id: r for r in decoder.decode(reqs, **kwargs)}


def test_a_left_padded_batch_decodes_each_row_as_if_alone(loaded):
    reqs = requests(loaded)
    together, alone = decode(loaded, reqs, batch=3), decode(loaded, reqs, batch=1)
    assert all(len(together[i].token_ids) == 20 for i in together)
    assert {i: r.token_ids for i, r in together.items()} == {i: r.token_ids for i, r in alone.items()}


def test_each_row_stops_at_its_own_budget(loaded):
    reqs = requests(loaded)
    reqs[1] = DecodeRequest(1, reqs[1].inputs_embeds, (0, 0), 5)
    results = decode(loaded, reqs)
    assert [len(results[i].token_ids) for i in range(3)] == [20, 5, 20]
    assert all(r.finish_reason is FinishReason.LENGTH for r in results.values())
    assert results[1].token_ids == decode(loaded, requests(loaded))[1].token_ids[:5]
    assert results[0].stats.prompt_tokens == 30 and results[1].stats.generated_tokens == 5


def test_a_row_ends_at_an_end_token_which_is_left_out(loaded):
    reqs = requests(loaded)
    free = decode(loaded, reqs)
    end = free[0].token_ids[3]
    results = decode(loaded, reqs, eos=(end,))
    assert results[0].finish_reason is FinishReason.EOS and results[0].token_ids == free[0].token_ids[:3]
    for i in (1, 2):  # the other rows run on, each to its own end token or budget
        tokens = free[i].token_ids
        cut = tokens.index(end) if end in tokens else len(tokens)
        assert results[i].token_ids == tokens[:cut]


def test_a_model_stuck_repeating_itself_is_stopped_as_a_loop(random_checkpoint, loaded):
    stuck = load_model(VibeVoiceConfig(model=str(random_checkpoint), device="cpu"))
    with torch.no_grad():
        stuck.model.model.language_model.norm.weight.zero_()  # every logit equal: token 0 forever
    reqs = [DecodeRequest(r.id, r.inputs_embeds, (0, 0), 500) for r in requests(loaded)]
    results = decode(stuck, reqs)
    for r in results.values():
        assert r.finish_reason is FinishReason.LOOP
        assert r.token_ids == (0,)  # one copy of the repeated pattern is kept
        assert r.stats.generated_tokens < 100  # stopped long before its 500-token budget


def test_prefill_computes_logits_for_the_last_position_only(loaded):
    shapes: list[tuple[int, ...]] = []
    hook = loaded.model.lm_head.register_forward_hook(lambda m, i, o: shapes.append(tuple(o.shape)))
    try:
        decode(loaded, requests(loaded))
    finally:
        hook.remove()
    vocab = loaded.model.lm_head.out_features
    assert shapes[0] == (3, 1, vocab)  # prefill of a 45-token prompt: one position per row


def test_cancel_stops_between_batches(loaded):
    cancel = threading.Event()
    reqs = requests(loaded)
    decoder = GenerateDecoder(loaded.model, GenerateConfig(max_batch=1), eos_token_ids=NEVER)
    results = decoder.decode(reqs, cancel)
    next(results)
    cancel.set()
    with pytest.raises(Cancelled):
        next(results)


def test_decoders_are_chosen_by_name_and_a_missing_one_is_a_clear_error(loaded, monkeypatch):
    decoder = create_decoder("hf", loaded.model, max_batch=4, eos_token_ids=(0,), segment_boundary=None)
    assert isinstance(decoder, GenerateDecoder) and decoder.config.max_batch == 4
    monkeypatch.setitem(DECODERS, "murmur", ("engine.decode.not_built_yet:Engine", "engine.decode.config:X"))
    with pytest.raises(ModelLoadError, match="'murmur' decode engine is not available"):
        create_decoder("murmur", loaded.model, max_batch=4, eos_token_ids=(0,), segment_boundary=None)
    with pytest.raises(ValueError, match="unknown decode engine"):
        create_decoder("vllm", loaded.model, max_batch=4, eos_token_ids=(0,), segment_boundary=None)


def test_loop_detection_can_be_tuned():
    assert GenerateConfig(loops=LoopGuardConfig(min_tokens=8)).loops.min_tokens == 8
    with pytest.raises(ValueError):
        GenerateConfig(max_batch=0)
