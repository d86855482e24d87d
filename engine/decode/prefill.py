"""Prefill: the model's own forward over one prompt, its KV handed to the engine's store.

The prompt (embeddings, optionally followed by tokens already generated) runs through the stock HF
forward with explicit positions 0..T-1 and a fresh `DynamicCache`; only the last position goes
through lm_head (the equivalent of `logits_to_keep=1`: the full (T, V) logits are never built).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from transformers import DynamicCache

from engine.decode.step import ModelParts


@dataclass(frozen=True, slots=True, eq=False)
class Prefilled:
    keys: torch.Tensor  # (L, Hkv, T, D), after RoPE at positions 0..T-1
    values: torch.Tensor  # (L, Hkv, T, D)
    logits: torch.Tensor  # (V,) float32, for the token after the last one


def _cache_keyword(backbone: torch.nn.Module) -> str:
    params = inspect.signature(backbone.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def prefill(parts: ModelParts, embeds: torch.Tensor, prefix: Sequence[int] = ()) -> Prefilled:
    """Run prompt embeddings (P, d), then the `prefix` tokens, through the model."""
    device = parts.device
    inputs = embeds.to(device=device, dtype=parts.dtype)
    if prefix:
        tokens = torch.tensor(list(prefix), device=device)
        inputs = torch.cat([inputs, parts.embed(tokens)])  # (P + k, d)
    length = inputs.shape[0]
    cache = DynamicCache(config=parts.config)
    out = parts.backbone(
        inputs_embeds=inputs[None],
        position_ids=torch.arange(length, device=device)[None],
        use_cache=True,
        **{_cache_keyword(parts.backbone): cache},
    )
    logits = parts.lm_head(out.last_hidden_state[0, -1]).float()  # (V,)
    keys = torch.stack([layer.keys[0] for layer in cache.layers])
    values = torch.stack([layer.values[0] for layer in cache.layers])
    return Prefilled(keys, values, logits)
