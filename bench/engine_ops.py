"""Operators of one decode step of Murmur's engine, counted with `torch.profiler` on the CPU.

Every top-level ATen operator the step issues is counted, except pure views (view, slice,
transpose, expand, ... and reshapes or `to` calls that copy nothing): on CUDA in eager mode each
counted operator is at least one kernel launch. The step is profiled for the same random Qwen2
shape with 2 and with 4 layers; the difference, halved, is the per-layer count, and what is left
is the fixed cost (embedding, RoPE tables, final norm, lm_head, token choice, input copies).

    .venv/bin/python bench/engine_ops.py [--dtype bfloat16] [--rows 4] [--show]

Targets for the eager path: at most 14 operators and exactly 4 GEMMs per layer.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter

import torch
from torch.profiler import ProfilerActivity, profile
from transformers import Qwen2Config, Qwen2ForCausalLM

from engine.decode.api import DecodeRequest
from engine.decode.config import EngineConfig
from engine.decode.eviction import make_policy
from engine.decode.fused import FusedModel
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


def step_ops(layers: int, dtype: torch.dtype, rows: int) -> Counter[str]:
    """Counted operators of one eager decode step over `rows` rows of different lengths."""
    model = build(layers, dtype)
    parts = ModelParts.from_model(model)
    config = EngineConfig(max_batch=rows, cuda_graphs=False, glue="plain")
    table, policy = RowTable(rows), make_policy(config.policy)
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
        first, _ = runner.admit(table.n, work, layout, slots.held)
        table.occupy(work, slots, [first])
    runner.launch(table.plan()).read()  # warm-up
    plan = table.plan()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        runner.launch(plan).read()
    return Counter(e.name for e in prof.events() if e.cpu_parent is None and counts(e))


def counts(event) -> bool:
    """Whether a top-level operator does work (launches a kernel on CUDA)."""
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


def per_layer(dtype: torch.dtype, rows: int) -> tuple[Counter[str], Counter[str]]:
    two, four = step_ops(2, dtype, rows), step_ops(4, dtype, rows)
    layer = Counter({k: (four[k] - two[k]) // 2 for k in four if four[k] != two[k]})
    fixed = two - Counter({k: 2 * v for k, v in layer.items()})
    return layer, fixed


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
    layer, fixed = per_layer(getattr(torch, args.dtype), args.rows)
    n, g = sum(layer.values()), sum(v for k, v in layer.items() if k in GEMMS)
    print(f"eager decode step, {args.dtype}, {args.rows} rows of different lengths (SDPA with a key mask)")
    print(f"ops per layer per step: {n}  (target <= {TARGET_OPS})")
    print(f"GEMMs per layer: {g}  (target {TARGET_GEMMS})")
    print(f"ops outside the layers: {sum(fixed.values())}")
    print(f"ops per step at 28 layers (Qwen2.5-7B): {sum(fixed.values()) + 28 * n}")
    if args.show:
        print("per layer: " + ", ".join(f"{k.removeprefix('aten::')} {v}" for k, v in sorted(layer.items())))
        print("fixed: " + ", ".join(f"{k.removeprefix('aten::')} {v}" for k, v in sorted(fixed.items())))
    ok = n <= TARGET_OPS and g == TARGET_GEMMS
    print("within target" if ok else "OVER TARGET")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
