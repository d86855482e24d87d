"""`murmur bench SOURCE`: run a sweep of named systems on one dataset; print the paper's table.

The default sweep is `engine.evaluation.systems.SWEEP` (single pass, chunk sizes 30–600 s, KV
eviction variants, the whisper baseline); `--systems` picks some by name, `--systems-file` reads
others from JSON, `--set BACKEND.KEY=VALUE` adds a backend option to every system of that
backend (e.g. `--set vibevoice.model=/models/tiny`). Systems that cannot run here are listed as
skipped with the reason. Writes `<out>/bench.json`, `<out>/bench.md`, `<out>/plots/*.png` and one
folder per system; `--list` only shows the systems and whether each can run.
"""

from __future__ import annotations

import argparse
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

from engine.cli.cluster_options import add_cluster_arguments, cluster_config, ray_backend
from engine.cli.eval import (
    add_scoring_arguments,
    add_source_arguments,
    guarded,
    load_manifest,
    metric_config,
    parse_options,
)
from engine.cli.option_args import add_option_arguments, recipe_of
from engine.cli.paper_switches import add_paper_switches, apply_paper_switches


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_source_arguments(p)
    g = p.add_argument_group("systems")
    g.add_argument(
        "--systems",
        help="comma-separated system names (default: the whole sweep; the paper's Table 4 rows "
        "table4-256-1024, table4-512-1024, table4-256-1538, table4-512-1538 (the authors' "
        "batch-minimum cap) and the same with -row (per-row cap) by name only)",
    )
    g.add_argument("--systems-file", type=Path, help="JSON list of systems to use instead of the sweep")
    g.add_argument(
        "--set", action="append", default=[], metavar="BACKEND.KEY=VALUE",
        help="backend option for every system of that backend (repeatable)",
    )  # fmt: skip
    g.add_argument("--baseline", default="single-pass", help="system the speed-up is measured against")
    g.add_argument("--list", action="store_true", help="list the systems and whether each can run, then stop")
    add_option_arguments(p, "bench")  # the speaker flags, shared by every system of the sweep
    add_paper_switches(p)
    add_scoring_arguments(p)
    add_cluster_arguments(p)
    p.add_argument("--out", type=Path, help="output folder (default: bench/<dataset>)")


def chosen_systems(args: argparse.Namespace) -> list[Any]:
    from engine.evaluation.systems import PAPER_ROWS, SWEEP, apply_overrides, read_systems, select

    names = [n.strip() for n in args.systems.split(",") if n.strip()] if args.systems else None
    systems = read_systems(args.systems_file) if args.systems_file else list(SWEEP)
    if names is not None and not args.systems_file:  # the paper's other rows, by name only
        systems += PAPER_ROWS
    speakers = recipe_of(args, "bench").pipeline.speakers
    chosen = apply_overrides(select(systems, names), _overrides(args.set))
    return apply_paper_switches([s.with_speakers(speakers) for s in chosen], args)


def _overrides(items: list[str]) -> dict[str, dict[str, Any]]:
    by_backend: dict[str, dict[str, Any]] = defaultdict(dict)
    for key, value in parse_options(items).items():
        backend, dot, option = key.partition(".")
        if not dot or not option:
            raise ValueError(f"--set needs BACKEND.KEY=VALUE, got {key!r}")
        by_backend[backend][option] = value
    return dict(by_backend)


def run(args: argparse.Namespace) -> int:
    return guarded(lambda cancel: _run(args, cancel), getattr(args, "cancel", None))


def _run(args: argparse.Namespace, cancel: threading.Event) -> int:
    from engine.evaluation.bench import run_bench, write_bench
    from engine.evaluation.runner import RunOptions
    from engine.evaluation.systems import unavailable

    systems = chosen_systems(args)
    if args.list:
        for s in systems:
            reason = unavailable(s)
            print(f"{s.name:14} {s.title:42} {'ready' if reason is None else 'skipped: ' + reason}")
        return 0
    factory = None
    if cluster_config(args) is not None:  # each system's chunks spread over Ray workers

        def factory(system: Any) -> Any:
            return ray_backend(args, system.backend, system.recipe.backend_options())

    manifest = load_manifest(args)
    out = args.out or Path("bench") / manifest.name
    options = RunOptions(metric_config(args), out, args.resume)
    report = run_bench(
        systems, manifest, options, args.count_failures, _stderr, cancel, args.baseline, factory
    )
    written = write_bench(report, out)
    print(report.table())
    _stderr(f"wrote {len(written)} files under {out}")
    return 0


def _stderr(message: str) -> None:
    import sys

    print(message, file=sys.stderr, flush=True)
