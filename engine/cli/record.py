"""`murmur record`: record from a microphone to FLAC; with `--live`, print lines as they are spoken.

The recording is written as it arrives (`engine.live`, flushed every ≤ 2 s) to
`OUT/recording-<date>-<time>.flac` (`-2`, `-3`… when that name is taken: never over another).
Ctrl-C (or `--seconds`, a finite number above 0) stops it; the live lines catch up, then the full
pipeline runs over the file and writes the usual exports beside it (a second Ctrl-C during that
step stops it; the recording is kept). A recording cut short by a crash is reported
at the next start (`murmur record --recover` makes it whole). `--play FILE` uses a file played
at real-time speed as the input (demos, tests); `--list-devices` shows the inputs. With
`--remote URL` the audio goes to a Murmur server as it is captured (`WS /v1/realtime`, see
engine/remote/realtime_client.py), the live lines are the server's, and the full transcript after
the recording is made there too. The stream opens once the input is open; a server that is not
there or refuses the key is an error (exit 1) that leaves no file behind.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from engine.cli.interrupt import install as install_interrupt
from engine.cli.live_options import add_model_arguments, formats_of, live_recipe
from engine.cli.remote_options import add_remote_arguments, remote_pipeline
from engine.errors import Cancelled, MurmurError, RecordingError
from engine.progress import format_clock


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input-device", metavar="DEVICE", help="input device: its number or name (see "
                   "--list-devices); default: the system's default input")  # fmt: skip
    p.add_argument("--device", dest="old_device", help=argparse.SUPPRESS)  # refused with a hint
    p.add_argument("--out", type=Path, default=Path("."), help="folder of the recording and its exports")
    p.add_argument("--live", action="store_true", help="transcribe while recording and print each line")
    p.add_argument("--seconds", type=float, help="stop after this many seconds (default: at Ctrl-C)")
    p.add_argument("--play", type=Path, metavar="FILE", help="use FILE, played at real-time speed, as input")
    p.add_argument("--list-devices", action="store_true", help="list the input devices and exit")
    p.add_argument("--recover", action="store_true", help="make recordings cut short in --out whole, exit")
    p.add_argument("--no-transcribe", action="store_true", help="only record; no transcript after it")
    add_model_arguments(p, "record")
    add_remote_arguments(p)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "old_device", None) is not None:
        print("murmur record: error: --device is now --input-device (the microphone; --list-devices "
              "shows them)", file=sys.stderr)  # fmt: skip
        return 2
    try:
        if args.list_devices:
            return _list_devices()
        if args.recover:
            return _recover(args.out)
        return _record(args)
    except Cancelled:
        print("murmur: transcription cancelled; the recording is kept", file=sys.stderr)
        return 130
    except (MurmurError, ValueError) as exc:
        print(f"murmur: error: {exc}", file=sys.stderr)
        return 1


def _list_devices() -> int:
    from engine.live.sources import list_devices

    devices = list_devices()
    for d in devices:
        mark = "*" if d.is_default else " "
        print(f"{mark} {d.index:3d}  {d.name}  ({d.channels} ch, {d.default_rate} Hz)")
    if not devices:
        print("murmur: no input devices found", file=sys.stderr)
    return 0 if devices else 1


def _recover(folder: Path) -> int:
    from engine.live.recovery import find_partial, recover

    partial = find_partial(folder)
    for p in partial:
        print(f"recovered {p.audio}: {format_clock(recover(p))}")
    if not partial:
        print(f"murmur: no recording was cut short in {folder}", file=sys.stderr)
    return 0


def _record(args: argparse.Namespace) -> int:
    from engine.live.flac_writer import new_recording_path
    from engine.live.recovery import find_partial
    from engine.live.session import LiveSession

    limit = args.seconds
    if limit is not None and not (math.isfinite(limit) and limit > 0):
        raise ValueError(f"--seconds must be a finite number of seconds above 0, got {limit}")
    formats = formats_of(args.format)
    for p in find_partial(args.out):
        print(f"murmur: {p.audio} was cut short; `murmur record --recover --out {args.out}` keeps it",
              file=sys.stderr)  # fmt: skip
    remote = _remote_live(args)
    backend = _backend(args) if (args.live or not args.no_transcribe) and not args.remote else None
    source = _source(args)
    path = new_recording_path(args.out)
    session = LiveSession(source, path, backend if args.live else None, on_line=_print_line,
                          on_error=_say_error,
                          on_audio=remote.send if remote else None)  # fmt: skip
    cancel = getattr(args, "cancel", None) or threading.Event()
    previous = install_interrupt(cancel)
    try:
        session.start()
        if remote is not None:
            _connect(remote, session, path)
        name = session.capture.source.name
        print(f"recording {name} to {path} (Ctrl-C stops)", file=sys.stderr, flush=True)
        _wait(session, cancel, args.seconds)
    finally:
        session.stop()
        signal.signal(signal.SIGINT, previous)
    seconds = session.capture.seconds
    print(f"recorded {format_clock(seconds)} to {path}", file=sys.stderr, flush=True)
    if args.live and not session.finish(timeout=None):
        return 1
    if remote is not None and not remote.finish(timeout=None):
        print(f"murmur: the server ended the live stream (close code {remote.close_code})", file=sys.stderr)
    if session.error is not None:
        print(f"murmur: error: {session.error}", file=sys.stderr)
    if args.no_transcribe or seconds <= 0:
        return 1 if session.error else 0
    written = _finalise(args, backend, path, formats)
    return 1 if session.error or not written else 0


def _connect(remote: Any, session: Any, path: Path) -> None:
    """Open the live stream once the input is open (the server closes a stream silent for 15 s, and
    a microphone can be slow to open); a refusal ends the recording and removes it: nothing in it
    was announced to the user yet."""
    try:
        remote.start()
    except MurmurError:
        session.stop()
        path.unlink(missing_ok=True)
        raise


def _source(args: argparse.Namespace) -> Any:
    from engine.live.sources import FileSource, MicSource

    if args.play is not None:
        return FileSource(args.play)
    device: int | str | None = args.input_device
    if isinstance(device, str) and device.isdigit():
        device = int(device)
    return MicSource(device)


def _remote_live(args: argparse.Namespace) -> Any:
    """With `--live --remote URL`: a `RealtimeClient` printing the server's lines (not yet connected)."""
    if not (args.live and args.remote):
        return None
    import os

    from engine.remote.realtime_client import RealtimeClient, RemoteLine
    from engine.serve.config import KEY_ENV

    def line(line: RemoteLine) -> None:
        who = f"{line.speaker}: " if line.speaker else ""
        print(f"[{format_clock(line.start)}] {who}{line.text}", flush=True)

    def error(message: str) -> None:
        print(f"murmur: {message}", file=sys.stderr, flush=True)

    key, speakers = args.api_key or os.environ.get(KEY_ENV), args.diarizer != "none"
    return RealtimeClient(args.remote, key, line, error, speakers=speakers, language=args.language)


def _backend(args: argparse.Namespace) -> Any:
    from engine.backends import build_backend

    recipe = live_recipe(args, "record")
    return build_backend(recipe.backend, recipe.backend_config)


def _wait(session: Any, cancel: threading.Event, limit: float | None) -> None:
    while not cancel.is_set() and not session.capture.ended.is_set():
        if limit is not None and session.capture.seconds >= limit:
            return
        time.sleep(0.1)


def _say_error(error: Exception) -> None:
    goes_on = "" if isinstance(error, RecordingError) else "; the recording goes on"
    print(f"murmur: {error}{goes_on}", file=sys.stderr, flush=True)


def _print_line(line: Any) -> None:
    u = line.utterance
    who = f"{u.speaker}: " if u.speaker else ""
    print(f"[{format_clock(u.start)}] {who}{u.text}", flush=True)


def _finalise(args: argparse.Namespace, backend: Any, path: Path, formats: tuple[str, ...]) -> bool:
    """The full pipeline over the recording, then the exports beside it; False if they could not be
    written (the transcript is then kept in the recovery folder, as `deliver` says)."""
    from engine.cli.outputs import Target
    from engine.cli.transcribe import deliver
    from engine.pipeline import Pipeline

    cancel = threading.Event()
    previous = install_interrupt(cancel)
    try:
        pipeline = remote_pipeline(args) or Pipeline(backend, live_recipe(args, "record").pipeline)
        started = time.perf_counter()
        transcript = pipeline.run(path, None, cancel)
        args.quiet, args.no_timestamps = not args.live, False
        target = Target(path.parent, path.stem)
        return deliver(transcript, time.perf_counter() - started, path, target, formats, args)
    finally:
        signal.signal(signal.SIGINT, previous)
