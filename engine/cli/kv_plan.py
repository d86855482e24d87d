"""`murmur kv-plan`: what each eviction policy keeps and costs for one chunk shape, without a model run.

Prints, per policy: kept % at the last step (the paper's measure) and the mean over steps, the share
of the speech evicted before the transcript reached it (a transcript moving evenly through the
audio), the most KV entries a row holds, KV bytes per row and per batch at that peak (and per row
against no eviction), and the KV bytes attention reads per step for the batch. Then, for a 141 GB
H200 and an 80 GB H100 with the real checkpoint's shapes, the rows each policy's row size admits
and the steps per second of a memory-bound step at that batch. The numbers are the ones the engine
reports for a run of the same shape (`engine.decode.plan`). Bad options and unreadable checkpoint
configs print one line and exit 1.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from engine.cli.eval import guarded
from engine.cli.option_args import add_option_arguments, given_options
from engine.decode.admission import rows_within
from engine.decode.eviction import POLICIES, PRESETS, EvictionConfig
from engine.decode.plan import (
    GPUS,
    SHAPES,
    TABLE4,
    ModelShape,
    PolicyPlan,
    batch_minimum_kept,
    chunk_layout,
    dtype_bytes,
    plan_policy,
    project,
    shape_from_config,
)
from engine.options import by_name

DEFAULT_POLICIES = (
    "none",
    "paper-output",
    "paper-speech",
    "paper-both",
    "speech-anchor",
)
DTYPES = ("bfloat16", "float16", "float32")


def add_arguments(p: argparse.ArgumentParser) -> None:
    model = p.add_mutually_exclusive_group()
    model.add_argument("--model", type=Path, help="checkpoint folder whose config.json gives the shape")
    model.add_argument("--shape", choices=sorted(SHAPES), help="a known model shape (default: qwen2.5-7b)")
    p.add_argument(
        "--dtype", choices=DTYPES,
        help="KV dtype (default: the checkpoint's `dtype`, or bfloat16 for --shape)",
    )  # fmt: skip
    p.add_argument("--chunk-seconds", type=float, default=300.0, help="audio per chunk (default: 300)")
    p.add_argument(
        "--output-tokens", type=int, default=2700, help="tokens generated per chunk (default: 2700)"
    )
    p.add_argument(
        "--system-tokens", type=int, default=100, help="prompt tokens around the speech (default: 100)"
    )
    p.add_argument("--batch-size", type=int, default=16, help="rows decoded together (default: 16)")
    p.add_argument(
        "--eviction", nargs="+", choices=[*POLICIES, *PRESETS], default=list(DEFAULT_POLICIES),
        metavar="NAME",
        help=f"policies or presets to compare (default: {' '.join(DEFAULT_POLICIES)})",
    )  # fmt: skip
    p.add_argument(
        "--table4", action="store_true",
        help="only the paper's Table 4 kept %%: the authors' batch-minimum cap next to this engine's "
        "per-row cap",
    )  # fmt: skip
    settings = p.add_argument_group("eviction settings (applied to every policy given)")
    add_option_arguments(p, "kv-plan", settings)


def run(args: argparse.Namespace) -> int:
    return guarded(lambda _cancel: _run(args), getattr(args, "cancel", None))


def _run(args: argparse.Namespace) -> int:
    if args.output_tokens < 1 or args.batch_size < 1 or not args.chunk_seconds > 0 or args.system_tokens < 0:
        raise ValueError(
            "--chunk-seconds, --output-tokens and --batch-size must be positive, --system-tokens not negative"
        )
    shape = _shape(args)
    if args.table4:
        print(format_table4(shape, args.output_tokens, args.system_tokens))
        return 0
    options = _eviction_fields(given_options(args, "kv-plan"))
    plans = []
    for name in args.eviction:
        config = EvictionConfig.from_options(name, **options)
        layout = chunk_layout(config, shape, args.chunk_seconds, args.output_tokens, args.system_tokens)
        plans.append(plan_policy(name, layout, shape, args.batch_size))
    none = chunk_layout(
        EvictionConfig("none"), shape, args.chunk_seconds, args.output_tokens, args.system_tokens
    )
    baseline = plan_policy("none", none, shape, args.batch_size)
    print(
        f"Plan (the policies' arithmetic, not a measurement): "
        f"{shape.layers} layers × {shape.kv_heads} KV heads × {shape.head_dim}, {shape.dtype_bytes}-byte KV; "
        f"{none.prompt_len} prompt tokens ({none.speech_len} speech at {shape.speech_rate:g}/s), "
        f"{args.output_tokens} generated, batch {args.batch_size}"
    )
    print(format_table(plans, baseline, args.kv_memory_limit))
    print()
    print(format_gpus(plans))
    if any(p.name == "speech-anchor" for p in plans):
        print(ANCHOR_NOTE)
    for plan in plans:
        if plan.lost > 0:
            print(
                f"warning: {plan.name} evicts about {100 * plan.lost:.0f} % of a chunk's speech before "
                "the transcript reaches it; expect words to be dropped"
            )
    return 0


ANCHOR_NOTE = (
    "speech-anchor: speech lost % is planned for correct times; decoding meters each row's harm "
    "(speech evicted before it was confirmed transcribed: inside a written segment, or past where "
    "its words had reached) and a row whose times run ahead of its text stops evicting and says so "
    "(anchor_stopped), then holding all its speech."
)


def format_table(rows: list[PolicyPlan], baseline: PolicyPlan, budget: int | None = None) -> str:
    """One row per policy; with a KV memory `budget`, the rows it admits at each policy's row size."""
    head = ["policy", "kept % (last)", "kept % (mean)", "speech lost %", "peak entries/row", "KV/row",
            "vs none", "KV/batch", "attention/step"]  # fmt: skip
    head += [f"rows in {_bytes(budget)}"] if budget else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.name, f"{100 * r.kept_last:.1f}", f"{100 * r.kept_mean:.1f}", f"{100 * r.lost:.1f}",
                 f"{r.peak_entries:,}", _bytes(r.row_bytes), f"{r.row_bytes / baseline.row_bytes:.2f}×",
                 _bytes(r.batch_bytes), _bytes(r.attention_bytes)]  # fmt: skip
        cells += [str(rows_within(budget, r.row_bytes))] if budget else []
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_table4(shape: ModelShape, output_tokens: int, system_tokens: int) -> str:
    """Table 4's kept % three ways: the paper's, the authors' batch-minimum cap (modelled meetings),
    and this engine's per-row cap on a 300 s chunk (what `--eviction speech` keeps)."""
    head = ["Table 4 (S / W)", "paper kept %", "batch-minimum cap (authors' batching)"]
    head += ["per row, 300 s chunk"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for delay, window, paper in TABLE4:
        config = PRESETS["paper-speech"].changed(window, delay=delay)  # the authors' sinks 32, rate 8
        compat = batch_minimum_kept(config, output_tokens=output_tokens, system_tokens=system_tokens)
        row = plan_policy("speech", chunk_layout(config, shape, 300, output_tokens, system_tokens), shape, 1)
        cells = [f"{delay} / {window}", f"{paper:.1f}", f"{100 * compat:.1f}", f"{100 * row.kept_last:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    note = (
        "S read as the delay (sinks 32, rate 8). The batch-minimum column models the authors' runs "
        "(a meeting's chunks in one batch, 17–50 min meetings, 285–300 s chunks and a shorter tail "
        "whose span caps every row): close to the paper, not equal, because the meetings are "
        "modelled, not the paper's. This engine caps each row by its own span, so it keeps less."
    )
    return "\n".join([*lines, "", note])


def format_gpus(rows: list[PolicyPlan]) -> str:
    """Rows admitted and projected decode speed per policy on each GPU in `GPUS`."""
    head = ["policy"]
    for gpu in GPUS:
        head += [f"{gpu.name}: rows", "steps/s", "tokens/s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.name]
        for gpu in GPUS:
            p = project(r, gpu)
            cells += [f"{p.rows}", f"{p.steps_per_second:.1f}", f"{p.tokens_per_second:,.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    note = (
        "Rows: what the GPU's memory less the loaded model (22 GB) and a 10 % reserve holds at each "
        "policy's row size. Steps/s: an upper bound for a memory-bound step reading the decoder's "
        "weights and those rows' KV at full HBM bandwidth (4.8 / 3.35 TB/s); not measured."
    )
    return "\n".join([*lines, "", note])


def _shape(args: argparse.Namespace) -> ModelShape:
    shape = shape_from_config(args.model) if args.model is not None else SHAPES[args.shape or "qwen2.5-7b"]
    if args.dtype is not None:
        shape = dataclasses.replace(shape, dtype_bytes=dtype_bytes(args.dtype))
    return shape


def _eviction_fields(given: dict[str, Any]) -> dict[str, Any]:
    """The eviction flags given, by `EvictionConfig.from_options` name (the table's field)."""
    table = by_name()
    rows = {k: table[k].fields for k in given}
    return {path[-1]: given[k] for k, path in rows.items() if path[:2] == ("decode", "eviction")}


def _bytes(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:.0f} B"
