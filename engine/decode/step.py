"""One decode step for rows 0..n-1, written over the model's own modules.

Per layer: input_layernorm → q/k/v projections → RoPE at each row's absolute position → write the
new key and value into the store → attention over the row's visible prefix → o_proj and residual →
post_attention_layernorm → MLP and residual; then the final norm and lm_head. Only the glue (the
residuals, RoPE, the store write and the attention call) is ours; the math is the model's.
`ModelParts` names the modules a decoder-only model exposes (Qwen2-style).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from engine.decode.attention import Attention, AttentionShape
from engine.decode.kv_store import KVStore


@dataclass(frozen=True, slots=True, eq=False)
class ModelParts:
    """A decoder stack (embed_tokens, layers, norm, rotary_emb, config) and its lm_head."""

    backbone: nn.Module
    lm_head: nn.Module

    @classmethod
    def from_model(cls, model: nn.Module) -> ModelParts:
        """Parts of a `*ForCausalLM` (`model.model`) or a speech LM (`model.model.language_model`)."""
        inner = getattr(model, "model", None)
        inner = getattr(inner, "language_model", inner)
        lm_head = getattr(model, "lm_head", None)
        if not isinstance(inner, nn.Module) or not isinstance(lm_head, nn.Module):
            raise ValueError(f"{type(model).__name__} has no decoder stack and lm_head the engine knows")
        return cls(inner, lm_head)

    @property
    def config(self) -> object:
        return self.backbone.config

    @property
    def layers(self) -> nn.ModuleList:
        layers: nn.ModuleList = self.backbone.layers
        return layers

    @property
    def attention_shape(self) -> AttentionShape:
        attn = self.layers[0].self_attn
        q_heads = self.config.num_attention_heads  # type: ignore[attr-defined]
        kv_heads = self.config.num_key_value_heads  # type: ignore[attr-defined]
        return AttentionShape(q_heads, kv_heads, attn.head_dim, attn.scaling, self.dtype)

    @property
    def vocab_size(self) -> int:
        return int(self.lm_head.weight.shape[0])

    @property
    def dtype(self) -> torch.dtype:
        return self.lm_head.weight.dtype

    @property
    def device(self) -> torch.device:
        return self.lm_head.weight.device

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """Input embeddings of token ids (...,) → (..., d)."""
        out: torch.Tensor = self.backbone.embed_tokens(tokens)
        return out


@dataclass(frozen=True, slots=True, eq=False)
class StepInputs:
    """What rows 0..n-1 need for one step, on the model's device."""

    tokens: torch.Tensor  # (n,) the token each row feeds
    positions: torch.Tensor  # (n,) its absolute position
    write: tuple[torch.Tensor, ...]  # per layer group: (n·Hkv,) flat store indices of its key and value
    seqlen: torch.Tensor  # (G, n) visible slots after the write, per layer group
    length: int  # max(seqlen)
    ragged: tuple[bool, ...]  # per layer group: seqlen differs from `length` somewhere
    layer_group: tuple[int, ...]  # group of each layer


def rotate(x: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor) -> torch.Tensor:
    """RoPE on x (n, H, D); cos (n, 1, D); `signed_sin` is sin with its first half negated.

    HF's `x·cos + rotate_half(x)·sin` with rotate_half(x) = [-x2, x1] equals
    `x·cos + roll(x, D/2)·[-sin1, sin2]` bit for bit (moving a sign is exact), in four ops.
    """
    return x * cos + x.roll(x.shape[-1] // 2, dims=-1) * signed_sin


def decode_step(parts: ModelParts, store: KVStore, attention: Attention, inp: StepInputs) -> torch.Tensor:
    """Logits (n, V) float32 of the next token of rows 0..n-1 (entries already moved into place)."""
    h = parts.embed(inp.tokens)  # (n, d)
    cos, sin = parts.backbone.rotary_emb(h, inp.positions[:, None])  # (n, 1, D) each
    half = sin.shape[-1] // 2
    sin = torch.cat((-sin[..., :half], sin[..., half:]), dim=-1)  # signed, see `rotate`
    prepared = -1
    for index, layer in enumerate(parts.layers):
        group = inp.layer_group[index]
        if group != prepared:  # visible lengths differ between layer groups
            attention.prepare(inp.seqlen[group], inp.length, inp.ragged[group], store.capacity)
            prepared = group
        x = layer.input_layernorm(h)
        h = h + _self_attention(layer.self_attn, x, cos, sin, store, index, attention, inp.write[group])
        h = h + layer.mlp(layer.post_attention_layernorm(h))
    h = parts.backbone.norm(h)
    logits: torch.Tensor = parts.lm_head(h)
    return logits.float()


def _self_attention(
    attn: nn.Module,
    x: torch.Tensor,  # (n, d)
    cos: torch.Tensor,
    sin: torch.Tensor,
    store: KVStore,
    layer: int,
    attention: Attention,
    write: torch.Tensor,
) -> torch.Tensor:
    n, dim = x.shape[0], attn.head_dim
    q = attn.q_proj(x).view(n, -1, dim)  # (n, Hq, D)
    k = attn.k_proj(x).view(n, -1, dim)  # (n, Hkv, D)
    v = attn.v_proj(x).view(n, -1, dim)  # (n, Hkv, D)
    q, k = rotate(q, cos, sin), rotate(k, cos, sin)
    store.write(layer, k, v, write)
    out = attention(q, store.k[layer], store.v[layer])  # (n, Hq, D)
    projected: torch.Tensor = attn.o_proj(out.reshape(n, -1))
    return projected
