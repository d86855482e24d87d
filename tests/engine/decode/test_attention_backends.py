"""Decode attention over the compact store equals dense masked softmax attention, for every backend
that can run here; query heads that share a KV head are never expanded into copies."""

from __future__ import annotations

import pytest
import torch

from engine.decode.attention import AttentionShape, available, make_attention

Q_HEADS, KV_HEADS, DIM, CAPACITY = 8, 2, 16, 48


def reference(q, k, v, seqlen, scale):
    """Plain softmax(q·kᵀ)·v per row over its first seqlen slots, KV heads repeated explicitly."""
    out = torch.empty_like(q)
    group = Q_HEADS // KV_HEADS
    for b, length in enumerate(seqlen.tolist()):
        keys = k[b, :, :length].repeat_interleave(group, dim=0)  # (Hq, L, D)
        values = v[b, :, :length].repeat_interleave(group, dim=0)
        weights = torch.softmax((keys @ q[b, :, :, None])[..., 0] * scale, dim=-1)  # (Hq, L)
        out[b] = (weights[:, None, :] @ values)[:, 0]
    return out


def run(name: str, dtype: torch.dtype, device: str, seqlen: list[int]):
    g = torch.Generator().manual_seed(0)
    rows = len(seqlen) + 1  # the store has a spare row the step does not use
    k = torch.randn(rows, KV_HEADS, CAPACITY, DIM, generator=g, dtype=torch.float64)
    v = torch.randn(rows, KV_HEADS, CAPACITY, DIM, generator=g, dtype=torch.float64)
    q = torch.randn(len(seqlen), Q_HEADS, DIM, generator=g, dtype=torch.float64)
    lengths = torch.tensor(seqlen)
    expected = reference(q, k, v, lengths, DIM**-0.5)
    shape = AttentionShape(Q_HEADS, KV_HEADS, DIM, DIM**-0.5, dtype)
    attention = make_attention(name, shape, torch.device(device))
    attention.prepare(lengths.to(device), max(seqlen), min(seqlen) != max(seqlen), CAPACITY)
    got = attention(q.to(device, dtype), k.to(device, dtype), v.to(device, dtype))
    return got.double().cpu(), expected


@pytest.mark.parametrize("seqlen", [[40, 40, 40], [40, 7, 23]], ids=["even", "ragged"])
def test_sdpa_fold_equals_dense_attention(seqlen):
    got, expected = run("sdpa", torch.float64, "cpu", seqlen)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)


def test_auto_picks_sdpa_on_the_cpu_and_refuses_gpu_kernels_there():
    shape = AttentionShape(Q_HEADS, KV_HEADS, DIM, DIM**-0.5, torch.float32)
    assert make_attention("auto", shape, torch.device("cpu")).name == "sdpa"
    with pytest.raises(ValueError, match="needs CUDA"):
        make_attention("flash-attn", shape, torch.device("cpu"))


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["sdpa", "flash-attn", "flashinfer"])
def test_gpu_backends_equal_dense_attention_in_bf16(name):
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    if not available(name, torch.device("cuda"), torch.bfloat16):
        pytest.skip(f"{name} is not installed")
    got, expected = run(name, torch.bfloat16, "cuda", [40, 7, 23])
    torch.testing.assert_close(got, expected, rtol=2e-2, atol=2e-2)
