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

from engine.cli.progressbar import ProgressBar
from engine.progress import format_clock


def transcribe_on_cluster(
    args: argparse.Namespace, cluster: Any, config: Any, formats: list[str], cancel: threading.Event
) -> int:
    from engine.cli.transcribe import backend_options
    from engine.distributed.corpus import CorpusRunner
    from engine.pipeline import Pipeline

    options = {k: v for k, v in backend_options(args).items() if v is not None}
    pipeline = Pipeline.create(args.backend, config, **options)
    bar = ProgressBar(sys.stderr, enabled=not args.quiet)  # today's stderr, not import time's
    on_file = _Writer(args, formats, bar)
    started = time.perf_counter()
    try:
        result = CorpusRunner(pipeline, args.backend, options, cluster).run(args.files, on_file, bar, cancel)
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

    def __init__(self, args: argparse.Namespace, formats: list[str], bar: ProgressBar) -> None:
        self.args, self.formats, self.bar = args, formats, bar
        self.failures = 0

    def __call__(self, outcome: Any) -> None:
        from engine.cli.transcribe import render_transcript
        from engine.export import ExportOptions, export

        if self.bar.live:
            sys.stderr.write("\n")
        if outcome.transcript is None:
            self.failures += 1
            print(f"murmur: error: {outcome.path}: {outcome.error}", file=sys.stderr)
            return
        out_dir = self.args.out or outcome.path.parent
        try:
            options = ExportOptions(timestamps=not self.args.no_timestamps)
            written = export(outcome.transcript, out_dir, self.formats, options)
        except OSError as exc:
            self.failures += 1
            print(f"murmur: error: could not write the transcript of {outcome.path.name} to {out_dir}: "
                  f"{exc.strerror or exc}", file=sys.stderr)  # fmt: skip
            return
        if not self.args.quiet:
            print(render_transcript(outcome.transcript))
            print(f"{outcome.path.name}: done after {outcome.seconds:.1f} s; wrote "
                  f"{', '.join(str(w) for w in written)}", file=sys.stderr)  # fmt: skip
