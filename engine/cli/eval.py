"""`murmur eval SOURCE --backend ...`: score one system on a dataset; write JSON and a Markdown table.

SOURCE is a manifest (.json/.csv, see `engine.evaluation.manifest`) or, with `--dataset NAME`, a
folder in a known layout (ami-ihm, ami-sdm, tedlium, earnings21, earnings21-eval10, folder). The
system is given with `murmur transcribe`'s system flags (the option table, `engine.options`),
plus `--option KEY=VALUE` for any other backend config field. An option the backend does not
have is one line and exit 1; a system that cannot run here (its checkpoint is not there) is
reported as skipped with the reason (exit 1).
Scoring conventions are flags (normaliser, tcpWER collar, DER collar and overlap, failures as
100 % error) and are written into the report. Output: `<out>/eval.json`, `<out>/eval.md`,
hypotheses in `<out>/hyp/`; the table is printed. Its argument and loading functions are
shared with `murmur bench`.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.cli.cluster_options import add_cluster_arguments, ray_backend
from engine.cli.interrupt import on_interrupt
from engine.cli.option_args import add_option_arguments, given_options, recipe_of
from engine.cli.paper_switches import add_paper_switches, apply_paper_switches
from engine.errors import Cancelled, MurmurError


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_source_arguments(p)
    add_option_arguments(p, "eval")
    g = p.add_argument_group("system")
    g.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE",
        help="any other backend option, e.g. --option min_new_tokens=512 (repeatable)",
    )  # fmt: skip
    g.add_argument("--name", help="name of this system in the report (default: the backend's)")
    add_paper_switches(p)
    add_scoring_arguments(p)
    add_cluster_arguments(p)
    p.add_argument("--out", type=Path, help="output folder (default: eval/<dataset>/<name>)")


def add_source_arguments(p: argparse.ArgumentParser) -> None:
    from engine.evaluation.datasets import DATASETS

    p.add_argument("source", type=Path, metavar="SOURCE", help="a manifest file, or a folder with --dataset")
    g = p.add_argument_group("dataset")
    g.add_argument("--dataset", choices=list(DATASETS), help="read SOURCE as a folder in this layout")
    g.add_argument("--allow-missing", action="store_true", help="skip recordings without audio or reference")
    g.add_argument("--only", help="comma-separated recording ids to evaluate")
    g.add_argument("--limit", type=int, help="evaluate at most this many recordings")
    g.add_argument("--write-manifest", type=Path, metavar="PATH", help="also save the manifest read")


def add_scoring_arguments(p: argparse.ArgumentParser) -> None:
    from engine.evaluation.normalize import NORMALIZERS

    g = p.add_argument_group("scoring")
    g.add_argument("--normalizer", choices=list(NORMALIZERS), default="murmur", help="default: murmur")
    g.add_argument("--collar", type=float, default=5.0, help="tcpWER collar, seconds (default 5)")
    g.add_argument(
        "--der-collar", type=float, default=0.25,
        help="DER collar, pyannote's total width in seconds: 0.25 forgives ±0.125 s (default 0.25)",
    )  # fmt: skip
    g.add_argument("--der-skip-overlap", action="store_true", help="leave overlapped speech out of DER")
    g.add_argument(
        "--count-failures", action="store_true",
        help="count recordings the system failed on as 100 %% error in corpus figures",
    )  # fmt: skip
    g.add_argument("--resume", action="store_true", help="reuse hypotheses already in the output folder")


def load_manifest(args: argparse.Namespace) -> Any:
    """The manifest SOURCE names, narrowed by --only/--limit, saved with --write-manifest."""
    from engine.evaluation.datasets import read_dataset
    from engine.evaluation.manifest import read_manifest, write_manifest

    if args.dataset:
        manifest = read_dataset(args.dataset, args.source, args.allow_missing)
    else:
        manifest = read_manifest(args.source)
    ids = [i.strip() for i in args.only.split(",") if i.strip()] if args.only else None
    manifest = manifest.select(ids, args.limit)
    if args.write_manifest:
        write_manifest(manifest, args.write_manifest)
    return manifest


def metric_config(args: argparse.Namespace) -> Any:
    from engine.evaluation.metrics import MetricConfig

    return MetricConfig(args.normalizer, args.collar, args.der_collar, args.der_skip_overlap)


def parse_options(items: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` strings as a dict (values parsed as JSON literals when they are)."""
    from engine.evaluation.systems import parse_value

    options = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"expected KEY=VALUE, got {item!r}")
        options[key.strip().replace("-", "_")] = parse_value(value)
    return options


def system_from_args(args: argparse.Namespace) -> Any:
    from engine.evaluation.systems import System
    from engine.options import by_name

    recipe = recipe_of(args, "eval")  # every flag checked now, before any recording is read
    given = given_options(args, "eval")
    table = by_name()
    options = {k: v for k, v in given.items() if table[k].owner == "backend"} | parse_options(args.option)
    single = recipe.pipeline.single_pass
    name = args.name or (f"{args.backend}-single" if single else args.backend)
    options_items = tuple(sorted(options.items()))
    return System(
        name, args.backend, options_items, recipe.pipeline.chunk_seconds, single, role="variant",
        speakers=recipe.pipeline.speakers,
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    return guarded(lambda cancel: _run(args, cancel), getattr(args, "cancel", None))


def _run(args: argparse.Namespace, cancel: threading.Event) -> int:
    from engine.evaluation.bench import write_system
    from engine.evaluation.runner import RunOptions, evaluate
    from engine.evaluation.tables import system_table

    (system,) = apply_paper_switches([system_from_args(args)], args)
    backend = ray_backend(args, system.backend, system.recipe.backend_options())  # None without --ray
    manifest = load_manifest(args)
    out = args.out or Path("eval") / manifest.name / system.name
    options = RunOptions(metric_config(args), out, args.resume)
    try:
        report = evaluate(system, manifest, options, _stderr, cancel, backend)
    finally:
        if backend is not None:
            backend.close()
    report = report.counting_failures(args.count_failures)
    written = write_system(report, out)
    print(system_table(report))
    _stderr(f"wrote {', '.join(str(p) for p in written)}")
    return 1 if report.skipped else 0


def guarded(body: Callable[[threading.Event], int], cancel: threading.Event | None = None) -> int:
    """Run `body(cancel)` with Ctrl-C setting `cancel` (twice: exit at once); user errors print one
    line and give 1. `cancel` may already be set by a Ctrl-C that came during start-up."""
    cancel = cancel or threading.Event()
    previous = signal.signal(signal.SIGINT, on_interrupt(cancel))
    try:
        return body(cancel)
    except Cancelled:
        print("murmur: cancelled", file=sys.stderr)
        return 130
    except (MurmurError, ValueError, OSError) as exc:
        print(f"murmur: error: {exc}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGINT, previous)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
