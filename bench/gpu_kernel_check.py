"""Checks that can fail: the split-KV kernel and the engine's logits against a float32 reference by
relative error, each with a deliberate mistake that the same test must reject.

`relative_error(got, want)` is the worst row's ‖got − want‖ / ‖want‖ over all but the first
dimension (a row whose reference is all zeros must be all zeros: error 0 or inf). `kernel_errors`
runs the kernel on ragged rows (a length-0 row, lengths up to the capacity, stale NaN slots past
each length) and returns its error against float32 SDPA on the same (rounded) inputs, and the error
after one split is dropped on purpose: a check passes only when the first is within `TOLERANCE` and
the second is not, so a comparison too loose to notice a lost split cannot pass.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

# relative error allowed per input dtype: float32 arithmetic; TF32 dot products on half inputs
TOLERANCE = {torch.float32: 1e-4, torch.bfloat16: 2e-2, torch.float16: 2e-2}


def relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    """The worst row's relative error (rows: the first dimension), in float64."""
    diff = (got.double() - want.double()).flatten(1).norm(dim=1)
    size = want.double().flatten(1).norm(dim=1)
    zero = size == 0
    ratio = torch.where(zero, torch.where(diff == 0, 0.0, float("inf")), diff / size.clamp_min(1e-300))
    return float(ratio.max())


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, seqlen: torch.Tensor, scale: float):
    """Float32 SDPA of q (n, Hq, D) over each row's first seqlen[b] slots; 0 for a length-0 row."""
    n, hq, _ = q.shape
    length = max(int(seqlen.max()), 1)
    group = hq // k.shape[1]
    keys = k[:n, :, :length].float().repeat_interleave(group, dim=1)
    values = v[:n, :, :length].float().repeat_interleave(group, dim=1)
    mask = (torch.arange(length, device=q.device)[None] < seqlen[:, None])[:, None, None]
    safe = torch.where(mask, 0.0, float("-inf")).to(torch.float32)
    keys, values = keys.nan_to_num(), values.nan_to_num()
    out = F.scaled_dot_product_attention(q.float()[:, :, None], keys, values, attn_mask=safe, scale=scale)
    return torch.where((seqlen > 0)[:, None, None], out[:, :, 0].nan_to_num(), 0.0)


def kernel_errors(
    rows: int,
    capacity: int,
    heads: tuple[int, int, int],
    dtype: torch.dtype,
    device: torch.device,
    seed: int = 0,
) -> tuple[float, float, int]:
    """(error, error with split 0 dropped, splits) of the split-KV kernel on ragged random rows."""
    from engine.decode import split_kv
    from engine.decode.attention import AttentionShape, make_attention

    q_heads, kv_heads, dim = heads
    g = torch.Generator(device=device).manual_seed(seed)
    k, v = (torch.randn(rows, kv_heads, capacity, dim, generator=g, device=device).to(dtype) for _ in "kv")
    q = torch.randn(rows, q_heads, dim, generator=g, device=device).to(dtype)
    seqlen = torch.randint(1, capacity + 1, (rows,), generator=g, device=device)
    seqlen[0] = capacity  # the longest row fills every split
    if rows > 1:
        seqlen[-1] = 0  # a row with nothing to attend to
    want = reference(q, k, v, seqlen, dim**-0.5)
    for b, length in enumerate(seqlen.tolist()):  # evicted or never written: must not be read
        k[b, :, length:], v[b, :, length:] = float("nan"), float("nan")
    attention = make_attention("split-kv", AttentionShape(q_heads, kv_heads, dim, dim**-0.5, dtype), device)
    attention.prepare(seqlen, capacity, True, capacity)
    got = attention(q, k, v)
    partial, lse = split_kv.partials(q, k, v, attention.seqlen, dim**-0.5, attention.splits)
    lse[:, :, 0] = float("-inf")  # split 0 dropped: its keys weigh nothing
    dropped = split_kv.combine(partial, lse, torch.empty_like(q))
    return relative_error(got, want), relative_error(dropped, want), attention.splits


def kernel_verdict(cases, dtype: torch.dtype, device: torch.device) -> tuple[bool, str]:
    """Pass when every case is within tolerance and dropping a split fails every case that splits."""
    tolerance, worst, caught, split = TOLERANCE[dtype], 0.0, True, 0
    for rows, capacity, heads in cases:
        error, dropped, splits = kernel_errors(rows, capacity, heads, dtype, device, seed=rows)
        worst = max(worst, error)
        if splits > 1:
            split += 1
            caught &= dropped > tolerance
    ok = worst <= tolerance and caught and split > 0
    detail = f"worst relative error {worst:.2e} (tolerance {tolerance:g}); a dropped split "
    return ok, detail + ("fails it" if caught and split else "PASSES it: the check cannot tell")
