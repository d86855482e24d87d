"""`murmur transcribe FILES… --ray`: every file's chunks in one queue over the cluster's workers.

Each file is exported (atomically) and printed as soon as its last chunk is back and its
speakers and stitching are done; a file that fails is reported on one line and the others go
on (exit 1 if any failed). One progress bar covers the whole run, with its ETA. A Ctrl-C
cancels the cluster's work, stops the workers and writes nothing for unfinished files.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Any

from engine.cli.delivery import deliver
from engine.cli.progressbar import ProgressBar
from engine.progress import format_clock


def transcribe_on_cluster(
    args: argparse.Namespace, cluster: Any, recipe: Any, plan: Any, cancel: threading.Event
) -> int:
    """Run every file of `args.files` over the cluster; `plan` is the checked `preflight` plan."""
    from engine.distributed.corpus import CorpusRunner
    from engine.pipeline import Pipeline

    options = recipe.backend_options()  # what each Ray worker builds its backend from
    pipeline = Pipeline.from_recipe(recipe)
    bar = ProgressBar(sys.stderr, enabled=not args.quiet)  # today's stderr, not import time's
    on_file = _Writer(args, plan, bar)
    started = time.perf_counter()
    try:
        runner = CorpusRunner(pipeline, recipe.backend, options, cluster)
        result = runner.run(args.files, on_file, bar, cancel)
    finally:
        bar.close()
    done = sum(o.transcript is not None for o in result.outcomes)
    audio = sum(o.transcript.duration for o in result.outcomes if o.transcript is not None)
    lost = f"; {result.workers_lost} worker(s) lost" if result.workers_lost else ""
    retried = f", {result.chunks_retried} chunk(s) run again" if result.chunks_retried else ""
    print(
        f"murmur: {done} of {len(result.outcomes)} files, {format_clock(audio)} of audio, on "
        f"{result.workers} workers in {time.perf_counter() - started:.1f} s{lost}{retried}",
        file=sys.stderr,
    )
    return 0 if done == len(result.outcomes) and not on_file.failures else 1


class _Writer:
    """Exports and prints each finished file (the `on_file` of a corpus run)."""

    def __init__(self, args: argparse.Namespace, plan: Any, bar: ProgressBar) -> None:
        self.args, self.plan, self.bar = args, plan, bar
        self.targets = dict(zip(args.files, plan.targets, strict=True))
        self.failures = 0

    def __call__(self, outcome: Any) -> None:
        if self.bar.live:
            sys.stderr.write("\n")
        if outcome.transcript is None:
            self.failures += 1
            print(f"murmur: error: {outcome.path}: {outcome.error}", file=sys.stderr)
            return
        target, formats = self.targets[outcome.path], self.plan.formats
        if not deliver(outcome.transcript, outcome.seconds, outcome.path, target, formats, self.args):
            self.failures += 1
