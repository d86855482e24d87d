"""`murmur watch DIR --out OUT`: transcribe every recording that appears in DIR, once.

A file is taken once it is completely written (size unchanged for `--settle` seconds), run through
the pipeline and exported to OUT; the outcome goes to `OUT/.murmur-watch.json`
(`engine.live.folder_watch`), so a restart skips what was done. A file that cannot be read is
skipped with one line and not tried again. Ctrl-C stops watching (a file being transcribed then
is tried again at the next start); `--once` stops when nothing is left to do.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time
from pathlib import Path
from typing import Any

from engine.cli.live_options import add_model_arguments, formats_of, live_recipe
from engine.errors import Cancelled, MurmurError
from engine.live.folder_watch import SETTLE_SECONDS, STATE_NAME


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("folder", type=Path, metavar="DIR", help="the folder to watch")
    p.add_argument("--out", type=Path, required=True, help="folder of the transcripts (and the state file)")
    p.add_argument("--settle", type=float, default=SETTLE_SECONDS,
                   help=f"seconds a file must stay unchanged before it is taken (default {SETTLE_SECONDS:g})")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between scans (default 1)")
    p.add_argument("--once", action="store_true", help="stop when every file present is handled")
    add_model_arguments(p, "watch")


def run(args: argparse.Namespace) -> int:
    from engine.live.folder_watch import FolderWatcher

    cancel = getattr(args, "cancel", None) or threading.Event()
    try:
        formats = formats_of(args.format)
        watcher = FolderWatcher(args.folder, args.out / STATE_NAME, args.settle)
        pipeline = _pipeline(args)
    except (MurmurError, ValueError) as exc:
        print(f"murmur: error: {exc}", file=sys.stderr)
        return 1
    print(f"watching {args.folder} → {args.out} (Ctrl-C stops)", file=sys.stderr, flush=True)
    with contextlib.suppress(Cancelled):
        _loop(watcher, pipeline, formats, args, cancel)
    print("murmur: stopped watching", file=sys.stderr)
    return 0


def _pipeline(args: argparse.Namespace) -> Any:
    from engine.pipeline import Pipeline

    return Pipeline.from_recipe(live_recipe(args, "watch"))


def _loop(watcher: Any, pipeline: Any, formats: tuple[str, ...], args: argparse.Namespace,
          cancel: threading.Event) -> None:  # fmt: skip
    idle_since = time.monotonic()
    while not cancel.is_set():
        ready = watcher.poll()
        for path in ready:
            _handle(watcher, pipeline, path, formats, args.out, cancel)
        if ready:
            idle_since = time.monotonic()
        elif args.once and time.monotonic() - idle_since > args.settle + args.interval:
            return
        cancel.wait(args.interval)


def _handle(watcher: Any, pipeline: Any, path: Path, formats: tuple[str, ...], out: Path,
            cancel: threading.Event) -> None:  # fmt: skip
    from engine.export import export

    try:
        transcript = pipeline.run(path, None, cancel)
    except Cancelled:
        raise
    except (MurmurError, ValueError, OSError) as exc:
        print(f"murmur: skipped {path.name}: {exc}", file=sys.stderr, flush=True)
        watcher.failed(path, str(exc))
        return
    written = export(transcript, out, formats, stem=path.stem)
    watcher.done(path, written)
    print(f"transcribed {path.name} → {', '.join(p.name for p in written)}", flush=True)
