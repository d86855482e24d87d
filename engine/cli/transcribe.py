"""`murmur transcribe FILE...`: run the pipeline on each file, print and export the transcript.

The system's flags come from the option table (`engine.options`, via `engine.cli.option_args`)
and make one `Recipe`; a flag not given leaves the config's default. Options and output folders are checked
before any work (`engine.cli.preflight`). Exports are written only after a file is fully
transcribed, each atomically, so an error or a Ctrl-C never leaves a half-written file; `--out`
is always a folder, and inputs sharing a name get distinct outputs (`engine.cli.outputs`). A file
that fails is reported on one line and the others still run (exit 1 if any failed); a transcript
whose export fails is saved to a recovery file. `-q` also hides what decoder libraries print.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.cli.cluster_options import add_cluster_arguments, cluster_config
from engine.cli.delivery import deliver, fail, keep_received, render_transcript
from engine.cli.interrupt import install as install_interrupt
from engine.cli.option_args import add_option_arguments, recipe_of
from engine.cli.preflight import Plan, preflight
from engine.cli.progressbar import ProgressBar
from engine.cli.quiet import library_output_hidden
from engine.cli.remote_options import add_remote_arguments, remote_pipeline
from engine.errors import Cancelled, MurmurError, ServerError
from engine.progress import StageTimes
from engine.types import Transcript

if TYPE_CHECKING:
    from engine.transcriber import Transcriber

__all__ = ["add_arguments", "deliver", "render_transcript", "run"]

DEFAULT_FORMATS = "srt,vtt,txt,json,docx"



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="audio or video files")
    add_option_arguments(p, "transcribe")
    p.add_argument("--profile", action="store_true", help="print the seconds each stage took")
    add_cluster_arguments(p)
    add_remote_arguments(p)
    p.add_argument("--out", type=Path, help="output folder (default: next to each input file)")
    p.add_argument(
        "--format",
        default=DEFAULT_FORMATS,
        help=f"comma-separated export formats (default: {DEFAULT_FORMATS})",
    )
    p.add_argument("--no-timestamps", action="store_true", help="omit timestamps in TXT and DOCX")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no transcript on stdout")


def run(args: argparse.Namespace) -> int:
    began = time.perf_counter()
    cancel = getattr(args, "cancel", None) or threading.Event()  # `main` passes the one Ctrl-C sets
    previous = install_interrupt(cancel)
    try:
        plan = preflight(args)  # before any decoding: bad options cost seconds, not hours
        for warning in plan.warnings:
            print(f"murmur: warning: {warning}", file=sys.stderr)
        with library_output_hidden(args.quiet):
            return _transcribe_all(args, plan, cancel, began)
    except Cancelled:
        print("murmur: cancelled; nothing was written for the unfinished file", file=sys.stderr)
        return 130
    except (MurmurError, ValueError) as exc:
        return fail(str(exc))
    finally:
        signal.signal(signal.SIGINT, previous)


def _transcribe_all(args: argparse.Namespace, plan: Plan, cancel: threading.Event, began: float) -> int:
    """Each file in turn; one that fails is reported and skipped. 1 when any failed."""
    from engine.pipeline import Pipeline

    recipe = recipe_of(args, "transcribe")
    if cancel.is_set():
        raise Cancelled()
    cluster = cluster_config(args)
    if cluster is not None:
        from engine.cli.cluster_run import transcribe_on_cluster

        return transcribe_on_cluster(args, cluster, recipe, plan, cancel)
    pipeline = remote_pipeline(args) or Pipeline.from_recipe(recipe)
    if args.profile:
        print(f"profile: setup {time.perf_counter() - began:.2f} s (imports, options)", file=sys.stderr)
    failures = 0
    for path, target in zip(args.files, plan.targets, strict=True):
        try:
            transcript, seconds = _transcribe_one(pipeline, path, cancel, args.quiet, args.profile)
        except Cancelled:
            raise
        except (MurmurError, ValueError, OSError) as exc:
            failures += 1
            fail(f"{path}: {exc}{keep_received(exc, path) if isinstance(exc, ServerError) else ''}")
            continue
        failures += not deliver(transcript, seconds, path, target, plan.formats, args)
    total = len(args.files)
    if failures and total > 1:
        fail(
            f"all {total} files failed"
            if failures == total
            else f"{failures} of {total} files failed; the others were written"
        )
    return 1 if failures else 0


def _transcribe_one(
    pipeline: Transcriber, path: Path, cancel: threading.Event, quiet: bool, profile: bool = False
) -> tuple[Transcript, float]:
    bar = ProgressBar(enabled=not quiet)
    times = StageTimes()
    rows: list[int] = []  # per chunk: rows of the batched call that decoded it (whisper)

    def report(progress: Any) -> None:
        bar(progress)
        times(progress)
        if progress.partial is not None and progress.partial.stats.batch_rows:
            rows.append(progress.partial.stats.batch_rows)

    started = time.perf_counter()
    try:
        transcript = pipeline.run(path, report, cancel)
    finally:
        bar.close()
    times.stop()
    seconds = time.perf_counter() - started
    if profile:
        print(f"profile: {path.name}: {times.render()} · total {seconds:.2f} s", file=sys.stderr)
        print(f"profile: {path.name}: {transcript.removed.render()}", file=sys.stderr)
        if rows:
            print(f"profile: {path.name}: {decode_calls(rows)}", file=sys.stderr)
    return transcript, seconds


def decode_calls(rows: list[int]) -> str:
    """`decode calls 8, rows/call 1.88` from the rows of the call that decoded each chunk."""
    calls = round(sum(1 / r for r in rows))
    return f"decode calls {calls}, rows/call {len(rows) / max(calls, 1):.2f} (first passes)"
