"""The Triton split-KV decode kernel equals SDPA on random data, run on the CPU under Triton's
interpreter: ragged rows, stale entries past each row's length (what eviction leaves behind),
1 to 64 rows, lengths up to 40k; and the engine decodes the same tokens with it as with SDPA,
captured steps keyed by the row bucket alone."""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F
from hf_oracle import make_requests, tiny_qwen2

from engine.decode.attention import AttentionShape, make_attention
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig, LayerRange
from engine.decode.loop_guard import LoopGuardConfig
from engine.decode.runner import Runner

pytest.importorskip("triton")
if os.environ.get("TRITON_INTERPRET") != "1":  # tests/conftest.py sets it where there is no GPU
    pytest.skip("the CPU run needs TRITON_INTERPRET=1", allow_module_level=True)


def sdpa(q, k, v, seqlen, scale):
    """Masked SDPA in float64, KV heads repeated explicitly: (n, Hq, D)."""
    n, hq, _ = q.shape
    length = int(seqlen.max())
    keys = k[:n, :, :length].double().repeat_interleave(hq // k.shape[1], dim=1)
    values = v[:n, :, :length].double().repeat_interleave(hq // k.shape[1], dim=1)
    mask = (torch.arange(length)[None] < seqlen[:, None])[:, None, None]
    out = F.scaled_dot_product_attention(q.double()[:, :, None], keys, values, attn_mask=mask, scale=scale)
    return out[:, :, 0]


def attend(rows: int, heads: tuple[int, int, int], capacity: int, dtype=torch.float32, seed: int = 0):
    """The kernel and SDPA on random q, k, v with ragged lengths; slots past a row's length hold NaN."""
    q_heads, kv_heads, dim = heads
    g = torch.Generator().manual_seed(seed)
    k = torch.randn(rows + 1, kv_heads, capacity, dim, generator=g).to(dtype)
    v = torch.randn(rows + 1, kv_heads, capacity, dim, generator=g).to(dtype)
    q = torch.randn(rows, q_heads, dim, generator=g).to(dtype)
    seqlen = torch.randint(1, capacity + 1, (rows,), generator=g)
    seqlen[0], seqlen[-1] = 1, capacity - 1  # the shortest and (almost) the longest row
    expected = sdpa(q, k, v, seqlen, dim**-0.5)
    for b, length in enumerate(seqlen.tolist()):  # evicted / never written: must not be read
        k[b, :, length:], v[b, :, length:] = float("nan"), float("nan")
    attention = make_attention("split-kv", AttentionShape(*heads, dim**-0.5, dtype), torch.device("cpu"))
    attention.prepare(seqlen, int(seqlen.max()), True, capacity)
    return attention(q, k, v), expected, attention


@pytest.mark.parametrize("rows", [1, 3, 16, 64])
def test_split_kv_equals_sdpa_on_ragged_rows_with_stale_slots(rows):
    got, expected, _ = attend(rows, (4, 2, 16), 320, seed=rows)
    assert not got.isnan().any()
    torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-5)


def test_split_kv_equals_sdpa_at_the_7b_head_shape_in_half_precision():
    got, expected, attention = attend(1, (28, 4, 128), 1024, dtype=torch.float16)
    assert attention.splits > 1  # the splits are combined
    torch.testing.assert_close(got.double(), expected, rtol=2e-3, atol=2e-3)


def test_split_kv_equals_sdpa_at_40k_slots():
    got, expected, attention = attend(2, (2, 1, 16), 40_960)
    assert attention.splits >= 4
    torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-5)


def test_the_split_count_depends_on_the_shape_never_on_the_lengths():
    shape = AttentionShape(4, 2, 16, 0.25, torch.float32)
    attention = make_attention("split-kv", shape, torch.device("cpu"))
    counts = set()
    for longest in (1, 300, 2048):
        attention.prepare(torch.tensor([1, longest]), longest, True, 2048)
        counts.add(attention.splits)
    assert len(counts) == 1


NO_LOOPS = LoopGuardConfig(enabled=False)
BOTH = EvictionConfig(
    "both",
    n_sink=1,
    output_window=4,
    speech_window=6,
    delay=2,
    speech_rate=1.0,
    layers=(LayerRange(1, 2, window=9),),
)


def decode(model, requests, **config):
    decoder = MurmurDecoder(model, EngineConfig(loop=NO_LOOPS, max_batch=3, **config))
    return {r.id: r.token_ids for r in decoder.decode(requests)}


@pytest.mark.parametrize("eviction", [EvictionConfig("none"), BOTH], ids=["none", "both"])
def test_the_engine_decodes_the_same_tokens_with_split_kv_as_with_sdpa(monkeypatch, eviction):
    model = tiny_qwen2(dtype=torch.float32)
    requests = [
        type(r)(r.id, r.inputs_embeds.float(), r.speech_span, r.max_new_tokens)
        for r in make_requests([40, 47, 35, 52, 30], [16, 8, 16, 12, 16])
    ]
    keys: list[set] = []
    launch = Runner.launch

    def watched(self, plan):
        out = launch(self, plan)
        keys.append({(key.rows, key.span) for key in self.graphs.graphs})
        return out

    expected = decode(model, requests, attention="sdpa", eviction=eviction)
    monkeypatch.setattr(Runner, "launch", watched)
    got = decode(model, requests, attention="split-kv", eviction=eviction, emulate_graphs=True)
    assert got == expected
    spans = {span for seen in keys for _, span in seen}
    assert spans == {-1}  # no length in any key: one step per row bucket serves every length


def kernel_check():
    import gpu_kernel_check

    return gpu_kernel_check


def test_a_split_dropped_on_purpose_fails_the_relative_error_check_the_kernel_passes():
    check = kernel_check()
    error, dropped, splits = check.kernel_errors(3, 1024, (4, 2, 16), torch.float32, torch.device("cpu"))
    assert splits > 1
    assert error <= check.TOLERANCE[torch.float32] < dropped


def test_the_gpu_check_verdict_fails_when_the_comparison_cannot_see_a_dropped_split(monkeypatch):
    check = kernel_check()
    cases = [(3, 1024, (4, 2, 16))]
    assert check.kernel_verdict(cases, torch.float32, torch.device("cpu"))[0]
    monkeypatch.setitem(check.TOLERANCE, torch.float32, 10.0)  # a comparison too loose to matter
    ok, detail = check.kernel_verdict(cases, torch.float32, torch.device("cpu"))
    assert not ok and "cannot tell" in detail


def test_a_row_of_length_zero_attends_to_nothing_and_lengths_past_the_capacity_read_the_capacity():
    g = torch.Generator().manual_seed(5)
    k, v = (torch.randn(3, 1, 100, 16, generator=g) for _ in "kv")  # 100 slots: not whole blocks
    q = torch.randn(3, 2, 16, generator=g)
    attention = make_attention("split-kv", AttentionShape(2, 1, 16, 0.25, torch.float32), torch.device("cpu"))
    attention.prepare(torch.tensor([0, 500, 100]), 100, True, 100)
    out = attention(q, k, v)
    assert torch.equal(out[0], torch.zeros_like(out[0]))
    for row in (1, 2):  # row 1's 500 reads no slot past the capacity (row 2's keys follow)
        want = sdpa(q[row : row + 1], k[row : row + 1], v[row : row + 1], torch.tensor([100]), 0.25)[0]
        torch.testing.assert_close(out[row].double(), want, rtol=1e-5, atol=1e-5)


def test_the_launch_the_split_plan_assumes_fits_four_programs_on_an_h200_sm():
    from engine.decode import split_kv

    shared = split_kv.shared_bytes(128, 2)  # the 7B head size, bf16
    assert split_kv.resident(shared, registers=128) >= split_kv.PROGRAMS_PER_SM
    # the launch it replaces (64-key blocks, Triton's default 3 stages) fits only 2
    assert 228 * 1024 // (3 * 2 * 64 * 128 * 2) == 2
