"""`murmur transcribe FILE...`: run the pipeline on each file, print and export the transcript.

Flags map one-to-one onto `PipelineConfig` and the backend's config; backend-specific flags
default to None so the backend's own defaults apply. Exports are written only after a file is
fully transcribed, each atomically, so an error or a Ctrl-C never leaves a half-written file.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from engine.backends import BACKENDS
from engine.backends.vibevoice import config as vibevoice
from engine.cli.eviction_options import add_eviction_arguments
from engine.cli.progressbar import ProgressBar
from engine.cli.speaker_options import add_speaker_arguments, speaker_config
from engine.decode.eviction import POLICIES, PRESETS
from engine.errors import Cancelled, MurmurError
from engine.progress import format_clock
from engine.types import Transcript

DEFAULT_FORMATS = "srt,vtt,txt,json,docx"
ENGINE_OPTIONS = vibevoice.ENGINE_OPTIONS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="audio or video files")
    p.add_argument("--backend", choices=sorted(BACKENDS), default="whisper", help="default: whisper")
    p.add_argument("--model", help="model name or local folder (default: the backend's own)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], help="default: auto")
    p.add_argument("--batch-size", type=int, help="chunks decoded together (default: backend's)")
    p.add_argument(
        "--chunk-seconds",
        type=float,
        help="longest chunk, cut in silence (default: 30 for whisper, 300 for vibevoice)",
    )
    p.add_argument(
        "--mode",
        choices=["chunked", "single"],
        default="chunked",
        help="chunked (default): VAD chunks run in batches; single: the whole recording in one pass",
    )
    p.add_argument("--context", help='names and terms to expect, comma separated: "Alice, Kubernetes"')
    vv = p.add_argument_group("vibevoice options")
    vv.add_argument("--dtype", choices=vibevoice.DTYPES, help="weights' dtype (default: auto)")
    vv.add_argument("--attention", choices=vibevoice.ATTENTIONS, help="attention kernel (default: sdpa)")
    vv.add_argument("--budget", choices=vibevoice.BUDGETS, help="tokens per chunk rule (default: paper)")
    vv.add_argument("--engine", choices=vibevoice.ENGINES, help="decoder (default: murmur)")
    vv.add_argument("--acoustic", choices=vibevoice.ACOUSTIC_MODES, help="audio latents (default: mean)")
    me = p.add_argument_group("decode engine options (--engine murmur; see docs/engine.md)")
    me.add_argument("--eviction", choices=[*POLICIES, *PRESETS], help="KV-cache eviction (default: none)")
    add_eviction_arguments(me)
    me.add_argument("--repetition-penalty", type=float, metavar="P", help="repeat penalty (default: 1, off)")
    add_speaker_arguments(p)
    p.add_argument("--out", type=Path, help="output folder (default: next to each input file)")
    p.add_argument(
        "--format",
        default=DEFAULT_FORMATS,
        help=f"comma-separated export formats (default: {DEFAULT_FORMATS})",
    )
    p.add_argument("--no-timestamps", action="store_true", help="omit timestamps in TXT and DOCX")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no transcript on stdout")


def backend_options(args: argparse.Namespace) -> dict[str, Any]:
    """The backend options given on the command line (None: use the backend's default)."""
    context = tuple(t.strip() for t in args.context.split(",") if t.strip()) if args.context else None
    return {
        "model": args.model,
        "device": args.device,
        "batch_size": args.batch_size,
        "context": context,
        **{k: getattr(args, k, None) for k in ("dtype", "attention", "budget", "engine", "acoustic")},
        **{k: getattr(args, k, None) for k in ENGINE_OPTIONS},
    }


def run(args: argparse.Namespace) -> int:
    from engine.export import FORMATS, ExportOptions, export
    from engine.pipeline import Pipeline, PipelineConfig

    formats = [f.strip().lower() for f in args.format.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        return _fail(f"unknown format(s) {', '.join(unknown)}; choose from {', '.join(FORMATS)}")
    cancel = threading.Event()
    previous = signal.signal(signal.SIGINT, _on_interrupt(cancel))
    try:
        config = PipelineConfig(
            chunk_seconds=args.chunk_seconds,
            single_pass=args.mode == "single",
            speakers=speaker_config(args),
        )
        pipeline = Pipeline.create(args.backend, config, **backend_options(args))
        failures = 0
        for path in args.files:
            try:
                transcript, seconds = _transcribe_one(pipeline, path, cancel, args.quiet)
            except MurmurError as exc:
                if isinstance(exc, Cancelled):
                    raise
                failures += 1
                _fail(f"{path}: {exc}")
                continue
            out_dir = args.out or path.parent
            try:
                written = export(
                    transcript, out_dir, formats, ExportOptions(timestamps=not args.no_timestamps)
                )
            except OSError as exc:
                failures += 1
                _fail(f"could not write the transcript of {path.name} to {out_dir}: {exc.strerror or exc}")
                continue
            if not args.quiet:
                print(render_transcript(transcript))
                rtf = seconds / max(transcript.duration, 1e-9)
                print(
                    f"\n{path.name}: {format_clock(transcript.duration)} of audio in {seconds:.1f} s "
                    f"(real-time factor {rtf:.3f}); wrote {', '.join(str(w) for w in written)}",
                    file=sys.stderr,
                )
        return 1 if failures else 0
    except Cancelled:
        print("murmur: cancelled; nothing was written for the unfinished file", file=sys.stderr)
        return 130
    except (MurmurError, ValueError) as exc:
        return _fail(str(exc))
    finally:
        signal.signal(signal.SIGINT, previous)


def _transcribe_one(
    pipeline: Any, path: Path, cancel: threading.Event, quiet: bool
) -> tuple[Transcript, float]:
    bar = ProgressBar(enabled=not quiet)
    started = time.perf_counter()
    try:
        transcript = pipeline.run(path, bar, cancel)
    finally:
        bar.close()
    return transcript, time.perf_counter() - started


def render_transcript(transcript: Transcript) -> str:
    """The transcript as readable lines: `[0:01:02] Speaker 1: text`."""
    lines = []
    for u in transcript.utterances:
        name = transcript.speaker_name(u.speaker)
        who = f"{name}: " if name else ""
        lines.append(f"[{format_clock(u.start)}] {who}{u.text}")
    return "\n".join(lines)


def _on_interrupt(cancel: threading.Event) -> Any:
    def handler(signum: int, frame: Any) -> None:
        if cancel.is_set():  # a second Ctrl-C: stop right now
            raise KeyboardInterrupt
        cancel.set()
        print("\nmurmur: stopping after the current step (Ctrl-C again to abort)", file=sys.stderr)

    return handler


def _fail(message: str) -> int:
    print(f"murmur: error: {message}", file=sys.stderr)
    return 1
