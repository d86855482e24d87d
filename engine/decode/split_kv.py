"""A split-KV decode attention kernel in Triton that reads each row's length from a tensor.

One query token per row against the row's dense prefix of KV slots, `seqlen[b]` long. Stage 1: one
program per (row, KV head, split) walks its split of the slots in blocks of `BLOCK_N`, stopping at
the row's length, and keeps an online softmax for the G query heads that share the KV head (each
key block is loaded once for all G heads: no `repeat_kv`); it writes a partial output and its
log-sum-exp (`partials`). Stage 2: one program per (row, query head) combines the splits
(`combine`). Empty splits (past the row's length) write a log-sum-exp of -inf and weigh nothing.
A length past the store's capacity is read as the capacity; a row of length 0 attends to nothing
and its output is 0 (never NaN).

Sizing: the split plan (`attention.SplitKV`) puts `PROGRAMS_PER_SM` stage-1 programs on each SM, so
a program is launched with `NUM_WARPS` warps, `NUM_STAGES` pipeline stages and key blocks of
`BLOCK_N`, whose shared memory (`shared_bytes`) lets that many be resident on an H200 (228 KiB per
SM: `resident`); 64-key blocks with Triton's default 3 stages took 96 KiB at head size 128 in
bf16, so only 2 fit. Arithmetic is float32; the dot
products use TF32 for half-precision inputs (exact for bf16/fp16 keys) and full float32 for
float32 models (so float32 decoding matches HF's with TF32 off).

Graph safety: the grid depends only on (rows, KV heads, splits), and the split count only on the
store capacity and the row count (`split_count`), never on a length; lengths are read on the device.
So one captured step serves every length, and nothing here syncs with the host.

This module imports Triton at import time: `attention.py` imports it only when the kernel is chosen.
On the CPU it runs under Triton's interpreter (`TRITON_INTERPRET=1`, set before this import): that
is how the tests check it against SDPA.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch.profiler import record_function

BLOCK_N = 32  # keys per block of the inner loop
NUM_WARPS = 4  # warps per stage-1 program
NUM_STAGES = 2  # software pipeline stages of the key/value loads
PROGRAMS_PER_SM = 4  # stage-1 programs the split plan counts on per SM
MIN_SPLIT = 256  # fewest slots one split covers (fewer: the combine costs more than it saves)


def shared_bytes(head_dim: int, itemsize: int) -> int:
    """Shared memory one stage-1 program stages: a key and a value block per pipeline stage."""
    return NUM_STAGES * 2 * BLOCK_N * _next_power_of_2(head_dim) * itemsize


def resident(shared: int, registers: int, sm_shared: int = 228 * 1024, sm_registers: int = 65536) -> int:
    """Programs of `shared` bytes and `registers` per thread one SM holds at once (defaults: an
    H100/H200 SM; at most 32 blocks)."""
    by_shared = sm_shared // max(shared, 1)
    by_registers = sm_registers // max(registers * 32 * NUM_WARPS, 1)
    return min(by_shared, by_registers, 32)


def split_count(capacity: int, rows: int, kv_heads: int, programs: int) -> int:
    """Splits per (row, KV head) so that stage 1 runs about `programs` programs, each split at least
    `MIN_SPLIT` slots long. Depends only on the captured shape, never on the lengths."""
    most = max(1, -(-capacity // MIN_SPLIT))
    return max(1, min(most, -(-programs // (rows * kv_heads))))


@triton.jit
def _partial(
    q_ptr, k_ptr, v_ptr, seqlen_ptr, out_ptr, lse_ptr,
    stride_qb, stride_qh,
    stride_kb, stride_kh, stride_kc,
    stride_vb, stride_vh, stride_vc,
    stride_ob, stride_oh, stride_os,
    stride_lb, stride_lh,
    scale, chunk, capacity, group: tl.constexpr, head_dim: tl.constexpr,
    BLOCK_G: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK: tl.constexpr, PRECISION: tl.constexpr,
):  # fmt: skip
    b, h, s = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    length = tl.minimum(tl.maximum(tl.load(seqlen_ptr + b).to(tl.int32), 0), capacity)
    g = tl.arange(0, BLOCK_G)
    d = tl.arange(0, BLOCK_D)
    g_ok, d_ok = g < group, d < head_dim
    heads = h * group + g  # query heads of this KV head
    q = tl.load(
        q_ptr + b * stride_qb + heads[:, None] * stride_qh + d[None, :],
        mask=g_ok[:, None] & d_ok[None, :],
        other=0.0,
    ).to(tl.float32)
    q = q * (scale * 1.4426950408889634)  # softmax in base 2
    start = s * chunk
    stop = tl.minimum(start + chunk, length)
    top = tl.full([BLOCK_G], float("-inf"), tl.float32)
    total = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
    k_row = k_ptr + b * stride_kb + h * stride_kh
    v_row = v_ptr + b * stride_vb + h * stride_vh
    for first in range(start, stop, BLOCK):
        n = first + tl.arange(0, BLOCK)
        n_ok = n < stop
        k = tl.load(
            k_row + n[:, None] * stride_kc + d[None, :], mask=n_ok[:, None] & d_ok[None, :], other=0.0
        )
        v = tl.load(
            v_row + n[:, None] * stride_vc + d[None, :], mask=n_ok[:, None] & d_ok[None, :], other=0.0
        )
        scores = tl.dot(q, tl.trans(k.to(tl.float32)), input_precision=PRECISION)  # (G, BLOCK)
        scores = tl.where(n_ok[None, :], scores, float("-inf"))
        new_top = tl.maximum(top, tl.max(scores, 1))
        weights = tl.exp2(scores - new_top[:, None])
        rescale = tl.exp2(top - new_top)
        total = total * rescale + tl.sum(weights, 1)
        acc = acc * rescale[:, None] + tl.dot(weights, v.to(tl.float32), input_precision=PRECISION)
        top = new_top
    empty = total == 0.0
    out = acc / tl.where(empty, 1.0, total)[:, None]
    lse = tl.where(empty, float("-inf"), top + tl.log2(tl.where(empty, 1.0, total)))
    out_at = out_ptr + b * stride_ob + heads[:, None] * stride_oh + s * stride_os + d[None, :]
    tl.store(out_at, out, mask=g_ok[:, None] & d_ok[None, :])
    tl.store(lse_ptr + b * stride_lb + heads * stride_lh + s, lse, mask=g_ok)


@triton.jit
def _combine(
    part_ptr, lse_ptr, out_ptr,
    stride_pb, stride_ph, stride_ps,
    stride_lb, stride_lh,
    stride_ob, stride_oh,
    splits, head_dim: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    b, h = tl.program_id(0), tl.program_id(1)
    s = tl.arange(0, BLOCK_S)
    d = tl.arange(0, BLOCK_D)
    s_ok, d_ok = s < splits, d < head_dim
    lse = tl.load(lse_ptr + b * stride_lb + h * stride_lh + s, mask=s_ok, other=float("-inf"))
    top = tl.max(lse, 0)
    weights = tl.where(s_ok & (lse > float("-inf")), tl.exp2(lse - top), 0.0)  # (S,)
    part = tl.load(
        part_ptr + b * stride_pb + h * stride_ph + s[:, None] * stride_ps + d[None, :],
        mask=s_ok[:, None] & d_ok[None, :],
        other=0.0,
    )
    total = tl.sum(weights, 0)  # 0 only for a row of length 0: its output is 0
    out = tl.sum(part * weights[:, None], 0) / tl.where(total > 0.0, total, 1.0)
    tl.store(out_ptr + b * stride_ob + h * stride_oh + d, out.to(out_ptr.dtype.element_ty), mask=d_ok)


def decode_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    seqlen: torch.Tensor,
    scale: float,
    splits: int,
    partial: torch.Tensor | None = None,
    lse: torch.Tensor | None = None,
) -> torch.Tensor:
    """Attention of q (n, Hq, D) over rows 0..n-1 of k, v (B, Hkv, C, D), row b seeing slots
    [0, min(seqlen[b], C)) (n,) → (n, Hq, D) in q's dtype (0 for a row of length 0). `partial`
    (n, Hq, S, D) and `lse` (n, Hq, S) float32 scratch may be passed in (reused across layers)."""
    partial, lse = partials(q, k, v, seqlen, scale, splits, partial, lse)
    return combine(partial, lse, torch.empty_like(q))


def partials(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    seqlen: torch.Tensor,
    scale: float,
    splits: int,
    partial: torch.Tensor | None = None,
    lse: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Stage 1: each split's partial output (n, Hq, S, D) and its log-sum-exp (n, Hq, S), base 2."""
    n, hq, dim = q.shape
    hkv, capacity = k.shape[1], k.shape[2]
    if q.stride(-1) != 1 or k.stride(-1) != 1 or v.stride(-1) != 1:
        raise ValueError("decode attention needs the head dimension contiguous")
    group = hq // hkv
    chunk = _round_up(_round_up(capacity, splits) // splits, BLOCK_N)  # slots per split, whole blocks
    if partial is None or lse is None:
        partial = torch.empty(n, hq, splits, dim, dtype=torch.float32, device=q.device)
        lse = torch.empty(n, hq, splits, dtype=torch.float32, device=q.device)
    with record_function("triton::split_kv_partial"):  # named for profilers (bench/engine_ops.py)
        _partial[(n, hkv, splits)](
            q, k, v, seqlen, partial, lse,
            q.stride(0), q.stride(1),
            k.stride(0), k.stride(1), k.stride(2),
            v.stride(0), v.stride(1), v.stride(2),
            partial.stride(0), partial.stride(1), partial.stride(2),
            lse.stride(0), lse.stride(1),
            scale, chunk, capacity, group, dim,
            BLOCK_G=max(16, triton.next_power_of_2(group)), BLOCK_D=triton.next_power_of_2(dim),
            BLOCK=BLOCK_N,
            PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
            num_warps=NUM_WARPS, num_stages=NUM_STAGES,
        )  # fmt: skip
    return partial, lse


def combine(partial: torch.Tensor, lse: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """Stage 2: the splits' partial outputs weighed by their log-sum-exps, into `out` (n, Hq, D)."""
    splits, dim = partial.shape[2], partial.shape[3]
    with record_function("triton::split_kv_combine"):
        _combine[(partial.shape[0], partial.shape[1])](
            partial, lse, out,
            partial.stride(0), partial.stride(1), partial.stride(2),
            lse.stride(0), lse.stride(1),
            out.stride(0), out.stride(1),
            splits, dim, BLOCK_S=triton.next_power_of_2(splits), BLOCK_D=triton.next_power_of_2(dim),
        )  # fmt: skip
    return out


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def _next_power_of_2(x: int) -> int:
    return 1 << max(x - 1, 0).bit_length()
