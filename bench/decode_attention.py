"""Decode attention choices side by side on this machine: masked SDPA, FlexAttention, split-kv.

One decode step's attention at the Qwen2.5-7B head shape (28 query heads, 4 KV heads, 128), `--rows`
ragged rows over `--capacity` slots, float32 on the CPU (or bf16 on CUDA). Prints, per choice, the
max |difference| from SDPA, the time per call and what it costs to follow new lengths:

- sdpa: a bool key mask (its shape follows the longest row, so a captured step needs a length key);
- flex: `torch.compile(flex_attention)` with a block mask built from the lengths by
  `create_block_mask` (rebuilt whenever lengths change: its ATen op count is printed);
- split-kv: `engine/decode/split_kv.py` (on the CPU under Triton's interpreter, set here when the
  machine has no NVIDIA device: its times there say nothing about a GPU; it is here for equality).

    .venv/bin/python bench/decode_attention.py [--rows 16] [--capacity 4096]
"""

from __future__ import annotations

import os

if not os.path.exists("/dev/nvidiactl"):  # before Triton loads
    os.environ.setdefault("TRITON_INTERPRET", "1")

import argparse
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import create_block_mask, flex_attention
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from engine.decode.split_kv import decode_attention, split_count

HQ, HKV, D = 28, 4, 128


def timed(fn, repeats: int = 3) -> float:
    fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(repeats):
        fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return (time.perf_counter() - started) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--capacity", type=int, default=4096)
    args = parser.parse_args()
    n, C = args.rows, args.capacity
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    g = torch.Generator(device=device).manual_seed(0)
    q = torch.randn(n, HQ, D, generator=g, device=device, dtype=dtype)
    k = torch.randn(n, HKV, C, D, generator=g, device=device, dtype=dtype)
    v = torch.randn(n, HKV, C, D, generator=g, device=device, dtype=dtype)
    seqlen = torch.randint(1, C + 1, (n,), generator=g, device=device)
    scale = D**-0.5
    print(f"{n} rows, {C} slots, {HQ}/{HKV} heads of {D}, {dtype}, {device}; torch {torch.__version__}")

    mask = (torch.arange(C, device=device)[None] < seqlen[:, None])[:, None, None]

    def sdpa():
        return F.scaled_dot_product_attention(q.view(n, HKV, HQ // HKV, D), k, v, attn_mask=mask, scale=scale)

    want = sdpa().reshape(n, HQ, D).float()
    print(f"sdpa      {1000 * timed(sdpa):9.1f} ms/call")

    def lengths(b, h, q_idx, kv_idx):
        return kv_idx < seqlen[b]

    started = time.perf_counter()
    block = create_block_mask(lengths, n, None, 1, C, device=device)
    build = time.perf_counter() - started
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        create_block_mask(lengths, n, None, 1, C, device=device)
    ops = sum(1 for e in prof.events() if e.cpu_parent is None and e.name.startswith("aten::"))
    flex = torch.compile(flex_attention, dynamic=False)
    started = time.perf_counter()
    got = flex(q[:, :, None], k, v, block_mask=block, enable_gqa=True, scale=scale)
    first = time.perf_counter() - started
    diff = (got[:, :, 0].float() - want).abs().max().item()
    per = timed(lambda: flex(q[:, :, None], k, v, block_mask=block, enable_gqa=True, scale=scale))
    print(f"flex      {1000 * per:9.1f} ms/call  max|diff| {diff:.1e}  compile+first {first:.1f} s  "
          f"block mask {1000 * build:.0f} ms, {ops} ATen ops per rebuild")  # fmt: skip

    programs = (
        4 * torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else 8
    )
    splits = split_count(C, n, HKV, programs)
    got = decode_attention(q, k, v, seqlen, scale, splits)
    diff = (got.float() - want).abs().max().item()
    per = timed(lambda: decode_attention(q, k, v, seqlen, scale, splits), repeats=1)
    where = "interpreted on the CPU" if os.environ.get("TRITON_INTERPRET") == "1" else "compiled"
    print(f"split-kv  {1000 * per:9.1f} ms/call  max|diff| {diff:.1e}  {splits} splits, 2 launches ({where})")


if __name__ == "__main__":
    main()
