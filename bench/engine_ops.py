"""Operators of one decode step of Murmur's engine, counted with `torch.profiler` on the CPU.

Every top-level ATen operator the step issues is counted, except pure views (view, slice,
transpose, expand, ... and reshapes or `to` calls that copy nothing): on CUDA in eager mode each
counted operator is at least one kernel launch. The step is profiled for the same random Qwen2
shape with 2 and with 4 layers; the difference, halved, is the per-layer count, and what is left
is the fixed cost (embedding, RoPE tables, final norm, lm_head, token choice, input copies).
It is counted for each attention backend that runs on the CPU: `sdpa`, and `split-kv` under
Triton's interpreter (each of its two Triton launches per layer counts as a kernel; set
automatically here when the machine has no NVIDIA device). flash-attn cannot run on the CPU.

Then the CUDA graphs a 300 s chunk needs at batch 16 (Qwen2.5-7B prompt of 2,350 tokens, 16 rows
finishing between 1,900 and 2,700 outputs, policy `none`), with the engine's own graph keys
(`StepGraphs._key`, and `capture_buckets` at batch start): SDPA needs one per (row bucket, 256-token
span); attention that reads lengths one per row bucket.

    .venv/bin/python bench/engine_ops.py [--dtype bfloat16] [--rows 4] [--show]

Targets for the eager path: at most 14 operators and exactly 4 GEMMs per layer. The last line is
`graphs for a 300 s chunk at batch 16: N (split-kv)`.
"""

from __future__ import annotations

import os

if not os.path.exists("/dev/nvidiactl"):  # before Triton loads: its kernels run interpreted here
    os.environ.setdefault("TRITON_INTERPRET", "1")

import argparse
import importlib.util
from collections import Counter

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile
from transformers import Qwen2Config, Qwen2ForCausalLM

from engine.decode.api import DecodeRequest
from engine.decode.capture import EmulatedCapture
from engine.decode.config import EngineConfig
from engine.decode.eviction import make_policy
from engine.decode.fused import FusedModel
from engine.decode.graphs import StepGraphs, row_bucket
from engine.decode.rows import RowTable
from engine.decode.runner import Runner
from engine.decode.sampling import DecodeMode
from engine.decode.slots import RowSlots
from engine.decode.step import ModelParts
from engine.decode.work import Work

VIEWS = {
    "aten::view",
    "aten::_unsafe_view",
    "aten::slice",
    "aten::select",
    "aten::transpose",
    "aten::t",
    "aten::expand",
    "aten::as_strided",
    "aten::unsqueeze",
    "aten::squeeze",
    "aten::permute",
    "aten::narrow",
    "aten::alias",
    "aten::detach",
    "aten::view_as",
    "aten::unflatten",
    "aten::split",
    "aten::chunk",
    "aten::lift_fresh",
    "aten::empty",
    "aten::empty_like",
    "aten::empty_strided",
    "aten::resolve_conj",
    "aten::resolve_neg",
    "aten::numpy_T",
}
MAYBE_COPY = {"aten::reshape", "aten::flatten", "aten::contiguous", "aten::to", "aten::type_as"}
GEMMS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::matmul", "aten::linear", "aten::baddbmm"}
TARGET_OPS, TARGET_GEMMS = 14, 4


def build(layers: int, dtype: torch.dtype) -> Qwen2ForCausalLM:
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=512,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=layers,
        num_attention_heads=8,
        num_key_value_heads=2,
        max_position_embeddings=1024,
    )
    return Qwen2ForCausalLM(config).to(dtype).eval()


def step_ops(layers: int, dtype: torch.dtype, rows: int, attention: str = "sdpa") -> Counter[str]:
    """Counted operators of one eager decode step over `rows` rows of different lengths."""
    model = build(layers, dtype)
    parts = ModelParts.from_model(model)
    config = EngineConfig(max_batch=rows, cuda_graphs=False, glue="plain", attention=attention)
    table, policy = RowTable(rows), make_policy(config.eviction)
    groups = policy.layout(1, (0, 0), 1, layers).layer_group
    fused = FusedModel.from_parts(parts.backbone, parts.device, "plain")
    runner = Runner(parts, fused, config, rows, groups)
    g = torch.Generator().manual_seed(1)
    requests = [
        DecodeRequest(i, torch.randn(20 + 3 * i, 128, generator=g, dtype=dtype), (2, 15 + 3 * i), 16)
        for i in range(rows)
    ]
    layouts = [policy.layout(r.prompt_length, r.speech_span, r.max_new_tokens, layers) for r in requests]
    runner.reserve(layouts)
    for request, layout in zip(requests, layouts, strict=True):
        work = Work(request, DecodeMode())
        slots = RowSlots(layout, 0)
        runner.admit(table.n, work, layout, slots.held)
        table.occupy(work, slots, [0])  # its first token (its value does not change the step's ops)
    runner.launch(table.plan()).read()  # warm-up
    plan = table.plan()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        runner.launch(plan).read()
    return Counter(e.name for e in prof.events() if e.cpu_parent is None and counts(e))


def counts(event) -> bool:
    """Whether a top-level operator does work (launches a kernel on CUDA)."""
    if event.name.startswith("triton::"):
        return True  # one Triton launch (split-kv)
    if not event.name.startswith("aten::") or event.name in VIEWS:
        return False
    if event.name in MAYBE_COPY:
        return any(not c.name.startswith("aten::_reshape_alias") for c in _descendants(event) if _copies(c))
    return True


def _copies(event) -> bool:
    return event.name in {"aten::clone", "aten::copy_", "aten::_to_copy"}


def _descendants(event):
    for child in event.cpu_children:
        yield child
        yield from _descendants(child)


def per_layer(dtype: torch.dtype, rows: int, attention: str = "sdpa") -> tuple[Counter[str], Counter[str]]:
    two, four = step_ops(2, dtype, rows, attention), step_ops(4, dtype, rows, attention)
    layer = Counter({k: (four[k] - two[k]) // 2 for k in four if four[k] != two[k]})
    fixed = two - Counter({k: 2 * v for k, v in layer.items()})
    return layer, fixed


PROMPT, BATCH = 2350, 16  # a 300 s chunk's prompt (60 + 2,250 speech + 40 tokens), rows


def chunk_schedule(batch: int = BATCH) -> list[tuple[int, int]]:
    """(rows, longest visible length) of every step of a 300 s chunk decoded at `batch` rows
    (policy none: a row sees prompt + outputs so far; rows finish between 1,900 and 2,700 outputs)."""
    outputs = np.linspace(1900, 2700, batch).astype(int)
    return [(int((outputs > j).sum()), PROMPT + j + 1) for j in range(int(outputs.max()))]


def chunk_graphs(attention: str, batch: int = BATCH) -> int:
    """Captured steps the engine keeps for a 300 s chunk at `batch` rows with this attention."""
    model = build(2, torch.float32)
    parts = ModelParts.from_model(model)
    config = EngineConfig(max_batch=batch, emulate_graphs=True, glue="plain")
    fused = FusedModel.from_parts(parts.backbone, parts.device, "plain")
    runner = Runner(parts, fused, config, batch, (0, 0))
    runner.store.allocate(PROMPT + 2700 + 1)
    graphs = StepGraphs(
        parts,
        fused,
        runner.store,
        _Reads(attention),
        runner.last,
        (0, 0),
        runner.group_layers,
        EmulatedCapture(),
    )
    keys = {graphs._key(rows, length) for rows, length in chunk_schedule(batch)}
    if graphs.attention.reads_lengths:  # `capture_buckets`: every row bucket at batch start
        keys |= {graphs._key(row_bucket(n, batch), 1) for n in range(1, batch + 1)}
    return len(keys)


class _Reads:
    """Stands in for an attention backend where only its graph key matters (`reads_lengths`)."""

    def __init__(self, name: str) -> None:
        self.name, self.reads_lengths = name, name != "sdpa"


def show_ops(name: str, layer: Counter[str], fixed: Counter[str], show: bool) -> int:
    n, g = sum(layer.values()), sum(v for k, v in layer.items() if k in GEMMS)
    attn = sum(v for k, v in layer.items() if k.startswith("triton::") or "attention" in k)
    outside = sum(fixed.values())
    print(f"{name}: ops per layer {n} (attention {attn}), GEMMs {g}, outside the layers {outside}, "
          f"per step at 28 layers {outside + 28 * n}")  # fmt: skip
    if show:
        print(
            "  per layer: " + ", ".join(f"{k.removeprefix('aten::')} {v}" for k, v in sorted(layer.items()))
        )
        print("  fixed: " + ", ".join(f"{k.removeprefix('aten::')} {v}" for k, v in sorted(fixed.items())))
    return n


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32", "float64"])
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--show", action="store_true", help="list the operators")
    args = parser.parse_args()
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # no profiler chatter (GPU probing) on a CPU count
    torch.set_num_threads(1)
    dtype = getattr(torch, args.dtype)
    layer, fixed = per_layer(dtype, args.rows)
    n, g = sum(layer.values()), sum(v for k, v in layer.items() if k in GEMMS)
    print(f"eager decode step, {args.dtype}, {args.rows} rows of different lengths (SDPA with a key mask)")
    print(f"ops per layer per step: {n}  (target <= {TARGET_OPS})")
    print(f"GEMMs per layer: {g}  (target {TARGET_GEMMS})")
    print(f"ops outside the layers: {sum(fixed.values())}")
    print(f"ops per step at 28 layers (Qwen2.5-7B): {sum(fixed.values()) + 28 * n}")
    ok = n <= TARGET_OPS and g == TARGET_GEMMS
    print("within target" if ok else "OVER TARGET")
    print("\nkernels per eager step, by attention (each counted op is at least one CUDA kernel):")
    show_ops("sdpa", layer, fixed, args.show)
    interpreted = os.environ.get("TRITON_INTERPRET") == "1" or torch.cuda.is_available()
    if importlib.util.find_spec("triton") is not None and interpreted:
        show_ops("split-kv", *per_layer(dtype, args.rows, "split-kv"), args.show)
    print("flash-attn: not runnable on the CPU (one kernel per layer where sdpa has its mask and SDPA)")
    print(f"\nCUDA graphs for a 300 s chunk at batch {BATCH} ({PROMPT}-token prompt, outputs 1,900-2,700):")
    for name in ("sdpa", "flash-attn"):
        print(f"  {name}: {chunk_graphs(name)}")
    print(f"graphs for a 300 s chunk at batch {BATCH}: {chunk_graphs('split-kv')} (split-kv)")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
