"""References for the decode engine, built only from the HF model: tiny models, `generate`, and a
full forward with an explicit 4-D mask that states what each token saw under eviction."""

from __future__ import annotations

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from engine.decode.anchor import GuardedAnchor
from engine.decode.api import DecodeRequest
from engine.decode.layout import RowLayout


def tiny_qwen2(seed: int = 0, vocab: int = 512, layers: int = 2, dtype: torch.dtype = torch.float64):
    """A random Qwen2 whose logits are far from ties (large init), in float64."""
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=vocab,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        initializer_range=0.2,
        max_position_embeddings=4096,
    )
    return Qwen2ForCausalLM(config).to(dtype).eval()


def make_requests(
    lengths: list[int], max_new: int | list[int], seed: int = 1, dim: int = 64, head: int = 4, tail: int = 5
) -> list[DecodeRequest]:
    """Frozen random prompts shaped like a chunk: `head` system tokens, speech, `tail` system tokens."""
    g = torch.Generator().manual_seed(seed)
    budgets = max_new if isinstance(max_new, list) else [max_new] * len(lengths)
    return [
        DecodeRequest(i, torch.randn(p, dim, generator=g, dtype=torch.float64), (head, p - tail), budget)
        for i, (p, budget) in enumerate(zip(lengths, budgets, strict=True))
    ]


def strip_eos(tokens: list[int], eos: tuple[int, ...]) -> tuple[int, ...]:
    for i, t in enumerate(tokens):
        if t in eos:
            return tuple(tokens[:i])
    return tuple(tokens)


@torch.inference_mode()
def hf_generate(model, request: DecodeRequest, eos: tuple[int, ...] = (), **kwargs) -> tuple[int, ...]:
    """HF `generate` with `inputs_embeds` on one request, EOS stripped."""
    out = model.generate(
        inputs_embeds=request.inputs_embeds[None],
        max_new_tokens=request.max_new_tokens,
        do_sample=False,
        eos_token_id=list(eos) or None,
        pad_token_id=0,
        **kwargs,
    )
    return strip_eos(out[0].tolist(), eos)


@torch.inference_mode()
def hf_generate_batch(
    model, requests: list[DecodeRequest], eos: tuple[int, ...] = ()
) -> list[tuple[int, ...]]:
    """HF `generate` on a left-padded batch of requests (one budget: the largest)."""
    longest = max(r.prompt_length for r in requests)
    dim = requests[0].inputs_embeds.shape[1]
    embeds = torch.zeros(len(requests), longest, dim, dtype=requests[0].inputs_embeds.dtype)
    mask = torch.zeros(len(requests), longest, dtype=torch.long)
    for b, r in enumerate(requests):
        embeds[b, longest - r.prompt_length :] = r.inputs_embeds
        mask[b, longest - r.prompt_length :] = 1
    out = model.generate(
        inputs_embeds=embeds,
        attention_mask=mask,
        max_new_tokens=max(r.max_new_tokens for r in requests),
        do_sample=False,
        eos_token_id=list(eos) or None,
        pad_token_id=0,
    )
    return [strip_eos(row.tolist(), eos)[: r.max_new_tokens] for row, r in zip(out, requests, strict=True)]


def anchors_of(tokens: list[int], tracker_factory, speech_len: int) -> list[int]:
    """The anchor the step feeding output k uses, for every k: read from outputs 0..k-1 by the
    guarded v2 rule (-1 before it has one): the engine's one-step lag."""
    if tracker_factory is None:
        return [-1] * (len(tokens) + 1)
    tracker, state, out = tracker_factory(), GuardedAnchor(speech_len), [-1]
    for k, token in enumerate(tokens):
        out.append(state.read(tracker.feed([token]), k + 1))
    return out


def visibility_mask(
    layout: RowLayout, steps: int, group: int = 0, anchors: list[int] | None = None
) -> torch.Tensor:
    """(T, T) bool for T = P + steps: prompt rows causal, output row i sees `layout.visible(i)`."""
    total = layout.prompt_len + steps
    mask = torch.ones(total, total, dtype=torch.bool).tril()
    for i in range(steps):
        row = torch.zeros(total, dtype=torch.bool)
        anchor = anchors[i] if anchors else -1
        row[torch.from_numpy(layout.visible(i, group, anchor))] = True
        mask[layout.prompt_len + i] = row
    return mask


@torch.inference_mode()
def hf_masked_greedy(
    model, request: DecodeRequest, layout: RowLayout, eos: tuple[int, ...] = (), tracker_factory=None
) -> tuple[int, ...]:
    """Greedy decoding where every step is one full forward of the HF modules, each layer under
    the explicit 4-D visibility mask of its layer group (anchors read from the tokens so far)."""
    embeds, tokens = request.inputs_embeds, []
    backbone = model.model
    for _ in range(request.max_new_tokens):
        if tokens:
            fed = backbone.embed_tokens(torch.tensor(tokens))
            inputs = torch.cat([embeds, fed])
        else:
            inputs = embeds
        total = inputs.shape[0]
        anchors = anchors_of(tokens, tracker_factory, layout.speech_len)
        additive = []
        for group in range(layout.groups):
            allowed = visibility_mask(layout, total - layout.prompt_len, group, anchors)
            zeros = torch.zeros(total, total, dtype=inputs.dtype)
            additive.append(zeros.masked_fill(~allowed, torch.finfo(inputs.dtype).min)[None, None])
        positions = torch.arange(total)[None]
        h = inputs[None]
        rope = backbone.rotary_emb(h, positions)
        for index, layer in enumerate(backbone.layers):
            mask = additive[layout.layer_group[index]]
            h = layer(h, attention_mask=mask, position_ids=positions, position_embeddings=rope)
        logits = model.lm_head(backbone.norm(h))
        token = int(logits[0, -1].argmax())
        if token in eos:
            break
        tokens.append(token)
    return tuple(tokens)


def markov_qwen2(scores: torch.Tensor, seed: int = 0):
    """A Qwen2 whose next-token logits are `scores[last token]` (V, V), whatever came before.

    Attention and MLP outputs are zeroed, embeddings are orthogonal with unit RMS, and lm_head maps
    embedding t onto row t of `scores`: a model state made to follow (and loop along) a chosen
    token chain. The prompt's last embedding picks the first token: `embedding(model, t)`.
    """
    vocab = scores.shape[0]
    model = tiny_qwen2(seed=seed, vocab=vocab)
    dim = model.config.hidden_size
    if vocab > dim:
        raise ValueError("the chain needs at most hidden_size tokens")
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        basis, _ = torch.linalg.qr(torch.randn(dim, dim, dtype=torch.float64))
        embeddings = basis[:vocab] * dim**0.5  # (V, d), orthogonal rows, RMS 1
        model.model.embed_tokens.weight.copy_(embeddings)
        model.model.norm.weight.fill_(1.0)
        model.lm_head.weight.copy_(scores.T.to(torch.float64) @ embeddings / dim)
    return model


def embedding(model, token: int) -> torch.Tensor:
    return model.model.embed_tokens.weight[token].detach().clone()

