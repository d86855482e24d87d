"""One decode step for rows 0..n-1, over the model's own weights fused for decoding.

Per layer: RMSNorm → q|k|v in one GEMM → RoPE at each row's absolute position (q, k and v at once,
see `fused.py`) → the new key and value into the store in one write → attention over the row's
visible prefix → o_proj with the residual → RMSNorm → gate|up in one GEMM → SiLU·up → down_proj
with the residual; then the final norm and lm_head. The weights and their values are the model's;
the prefill and every reference use its stock modules. `ModelParts` names the modules a decoder-only
model exposes (Qwen2-style).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from engine.decode.attention import Attention, AttentionShape
from engine.decode.fused import FusedModel
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
    write: tuple[torch.Tensor, ...]  # per layer group: (n, 2, Hkv) store indices (`KVStore.flat_index`)
    seqlen: torch.Tensor  # (G, n) visible slots after the write, per layer group
    length: int  # max(seqlen), or the store capacity where the attention reads `seqlen` itself
    ragged: tuple[bool, ...]  # per layer group: seqlen differs from `length` somewhere
    layer_group: tuple[int, ...]  # group of each layer


def head_tables(
    cos: torch.Tensor, sin: torch.Tensor, rotated: int, plain: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-head RoPE tables (n, rotated + plain, D) from HF's (n, 1, D): the plain heads (v) get
    cos 1 and sin 0, which leaves them exactly as they are; sin has its first half negated."""
    n, _, dim = cos.shape
    half = dim // 2
    signed = torch.cat((-sin[..., :half], sin[..., half:]), dim=-1)
    ones = torch.ones(n, plain, dim, dtype=cos.dtype, device=cos.device)
    cos_t = torch.cat((cos.expand(n, rotated, dim), ones), dim=1)
    sin_t = torch.cat((signed.expand(n, rotated, dim), torch.zeros_like(ones)), dim=1)
    return cos_t, sin_t


def decode_step(
    parts: ModelParts, model: FusedModel, store: KVStore, attention: Attention, inp: StepInputs
) -> torch.Tensor:
    """Logits (n, V) float32 of the next token of rows 0..n-1 (entries already moved into place)."""
    shape, glue = parts.attention_shape, model.glue
    h = parts.embed(inp.tokens)  # (n, d)
    n, hq, dim = h.shape[0], shape.q_heads, shape.head_dim
    cos, sin = parts.backbone.rotary_emb(h, inp.positions[:, None])  # (n, 1, D) each
    cos, sin = head_tables(cos, sin, hq + shape.kv_heads, shape.kv_heads)  # (n, Hq + 2·Hkv, D)
    prepared = -1
    for index, layer in enumerate(model.layers):
        group = inp.layer_group[index]
        if group != prepared:  # visible lengths differ between layer groups
            attention.prepare(inp.seqlen[group], inp.length, inp.ragged[group], store.capacity)
            prepared = group
        x = glue.norm(h, layer.input_norm, layer.eps)
        qkv = torch.addmm(layer.qkv_bias, x, layer.qkv_t).view(n, -1, dim)  # (n, Hq + 2·Hkv, D)
        rotated = glue.rope(qkv, cos, sin)  # q and k rotated, v unchanged
        store.write_kv(index, rotated[:, hq:], inp.write[group])
        out = attention(rotated[:, :hq], *store.layer(index))  # (n, Hq, D)
        h = torch.addmm(h, out.reshape(n, -1), layer.o_t)  # residual + o_proj
        x = glue.norm(h, layer.post_norm, layer.eps)
        h = torch.addmm(h, glue.silu_mul(torch.mm(x, layer.gate_up_t)), layer.down_t)  # residual + MLP
    h = glue.norm(h, model.final_norm, model.final_eps)
    logits: torch.Tensor = parts.lm_head(h)
    return logits.float()
