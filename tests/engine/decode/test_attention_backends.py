"""Decode attention over the compact store equals dense masked softmax attention, for every backend
that can run here; query heads that share a KV head are never expanded into copies."""

from __future__ import annotations

import importlib
import sys
import types

import pytest
import torch
from hf_oracle import make_requests, tiny_qwen2

from engine.decode.attention import AttentionShape, FlashAttn, available, make_attention, probe
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.loop_guard import LoopGuardConfig

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
@pytest.mark.parametrize("name", ["sdpa", "flash-attn", "split-kv", "flashinfer"])
def test_gpu_backends_equal_dense_attention_in_bf16(name):
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    if not available(name, torch.device("cuda"), torch.bfloat16):
        pytest.skip(f"{name} is not installed")
    got, expected = run(name, torch.bfloat16, "cuda", [40, 7, 23])
    torch.testing.assert_close(got, expected, rtol=2e-2, atol=2e-2)


def fake_flash_attn(tmp_path, monkeypatch, body: str) -> None:
    """A `flash_attn` package on sys.path whose module body is `body`."""
    package = tmp_path / "flash_attn"
    package.mkdir()
    (package / "__init__.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    # the fake leaves sys.modules with the test: set then delete, so undoing both removes the key
    monkeypatch.setitem(sys.modules, "flash_attn", types.ModuleType("flash_attn"))
    monkeypatch.delitem(sys.modules, "flash_attn")
    importlib.invalidate_caches()


def test_a_flash_attn_built_for_another_torch_warns_and_the_engine_still_decodes(tmp_path, monkeypatch):
    fake_flash_attn(
        tmp_path,
        monkeypatch,
        'raise ImportError("flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda9SetDevice")',
    )
    model = tiny_qwen2()
    requests = make_requests([30, 41], 8)
    config = EngineConfig(loop=LoopGuardConfig(enabled=False), max_batch=2)
    with pytest.warns(RuntimeWarning, match="flash_attn is installed but does not import.*undefined symbol"):
        decoder = MurmurDecoder(model, config)
        got = {r.id: r.token_ids for r in decoder.decode(requests)}
    plain = MurmurDecoder(
        model, EngineConfig(loop=LoopGuardConfig(enabled=False), max_batch=2, attention="sdpa")
    )
    assert got == {r.id: r.token_ids for r in plain.decode(requests)}
    assert all(len(tokens) == 8 for tokens in got.values())


def test_a_flash_attn_that_imports_but_cannot_run_fails_its_probe_with_a_warning(tmp_path, monkeypatch):
    body = "def flash_attn_with_kvcache(*args, **kw):\n    raise RuntimeError('no kernel image')\n"
    fake_flash_attn(tmp_path, monkeypatch, body)
    shape = AttentionShape(Q_HEADS, KV_HEADS, DIM, DIM**-0.5, torch.float32)
    with pytest.warns(RuntimeWarning, match="'flash-attn' does not run here.*no kernel image"):
        assert not probe("flash-attn", lambda: FlashAttn(shape), shape, torch.device("cpu"))
