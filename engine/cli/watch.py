"""`murmur watch DIR --out OUT`: transcribe every recording that appears in DIR, once.

A file is taken once it is completely written (unchanged for `--settle` seconds and decodable to
its end: `engine.live.folder_watch`), run through the pipeline and exported to OUT under its own
stem (a second file with the same stem gets `-2`); the outcome goes to `OUT/.murmur-watch.json`
with the size and time read before transcribing, so a restart skips what was done and a file
replaced meanwhile is transcribed again. One watcher per folder (a second one is refused).

Nothing ends the watcher but Ctrl-C (or `--once` when nothing is left): a file that cannot be
read is skipped with one line and not tried again; a file moved away is named once; a folder
removed is waited for; transcripts that cannot be written (read-only or full OUT) are kept in
memory and in a recovery file, said once, and written when OUT takes them again (exports are
atomic: an old transcript stays whole); a state file that cannot be saved is said once (the
state is kept in memory). A file being transcribed at Ctrl-C is tried again at the next start.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time
from dataclasses import dataclass, field
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
    from engine.cli.preflight import check_writable
    from engine.live.folder_watch import FolderWatcher
    from engine.live.watch_state import FolderLock

    cancel = getattr(args, "cancel", None) or threading.Event()
    try:
        formats = formats_of(args.format)
        check_writable(args.out, "--out")
        watcher = FolderWatcher(args.folder, args.out / STATE_NAME, args.settle, on_note=_say)
        lock = FolderLock(args.folder, args.out)
        pipeline = _pipeline(args)
    except (MurmurError, ValueError) as exc:
        print(f"murmur: error: {exc}", file=sys.stderr)
        return 1
    print(f"watching {args.folder} → {args.out} (Ctrl-C stops)", file=sys.stderr, flush=True)
    try:
        with contextlib.suppress(Cancelled):
            _Loop(watcher, pipeline, formats, args.out).run(args, cancel)
    finally:
        lock.release()
    print("murmur: stopped watching", file=sys.stderr)
    return 0


def _say(text: str) -> None:
    print(f"murmur: {text}", file=sys.stderr, flush=True)


def _pipeline(args: argparse.Namespace) -> Any:
    from engine.pipeline import Pipeline

    return Pipeline.from_recipe(live_recipe(args, "watch"))


@dataclass
class _Loop:
    """The watcher's loop; what it said once is not said again until it changes."""

    watcher: Any
    pipeline: Any
    formats: tuple[str, ...]
    out: Path
    unwritten: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # name → (ready, transcript)
    state_failing: bool = False

    def run(self, args: argparse.Namespace, cancel: threading.Event) -> None:
        idle_since = time.monotonic()
        while not cancel.is_set():
            self._write_unwritten()
            ready = [r for r in self.watcher.poll() if r.path.name not in self.unwritten]
            for item in ready:
                self._handle(item, cancel)
            if ready:
                idle_since = time.monotonic()
            elif args.once and time.monotonic() - idle_since > args.settle + args.interval:
                return
            cancel.wait(args.interval)

    def _handle(self, ready: Any, cancel: threading.Event) -> None:
        try:
            transcript = self.pipeline.run(ready.path, None, cancel)
        except Cancelled:
            raise
        except (MurmurError, ValueError, OSError) as exc:
            if not ready.path.exists():
                _say(f"{ready.path.name} was moved away before it was transcribed")
                return
            _say(f"skipped {ready.path.name}: {exc}")
            self._save(self.watcher.failed, ready, str(exc))
            return
        self._write(ready, transcript, first=True)

    def _write(self, ready: Any, transcript: Any, first: bool) -> bool:
        from engine.cli.outputs import rescue
        from engine.export import export

        name, stem = ready.path.name, self.watcher.stem_for(ready.path.name)
        try:
            written = export(transcript, self.out, self.formats, stem=stem)
        except (OSError, ValueError) as exc:
            if first:
                saved = rescue(transcript, stem)
                kept = f"kept in {saved} and in memory" if saved else "kept in memory"
                reason = getattr(exc, "strerror", None) or exc
                _say(f"cannot write the transcript of {name} into {self.out} ({reason}); {kept}, "
                     "written as soon as it can be")  # fmt: skip
            self.unwritten[name] = (ready, transcript)
            return False
        self.unwritten.pop(name, None)
        self._save(self.watcher.done, ready, written)
        print(f"transcribed {name} → {', '.join(p.name for p in written)}", flush=True)
        return True

    def _write_unwritten(self) -> None:
        for ready, transcript in list(self.unwritten.values()):
            self._write(ready, transcript, first=False)

    def _save(self, record: Any, ready: Any, detail: Any) -> None:
        try:
            record(ready, detail)
        except OSError as exc:
            if not self.state_failing:
                _say(f"cannot save the watch state {self.watcher.state_file} ({exc.strerror or exc}); "
                     "going on: files done from now on may be transcribed again after a restart")  # fmt: skip
            self.state_failing = True
            return
        self.state_failing = False
