"""`murmur transcribe FILE...`: run the pipeline on each file, print and export the transcript.

Flags map one-to-one onto `PipelineConfig` and the backend's config; backend-specific flags
default to None so the backend's own defaults apply. Options and output folders are checked
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
from typing import Any

from engine.backends import BACKENDS
from engine.backends.vibevoice import config as vibevoice
from engine.cli.cluster_options import add_cluster_arguments, cluster_config
from engine.cli.delivery import backend_options, deliver, fail, render_transcript
from engine.cli.eviction_options import add_eviction_arguments
from engine.cli.interrupt import install as install_interrupt
from engine.cli.preflight import Plan, preflight
from engine.cli.progressbar import ProgressBar
from engine.cli.quiet import library_output_hidden
from engine.cli.remote_options import add_remote_arguments, remote_pipeline
from engine.cli.speaker_options import add_speaker_arguments, speaker_config
from engine.decode.eviction import POLICIES, PRESETS
from engine.errors import Cancelled, MurmurError
from engine.progress import StageTimes
from engine.types import Transcript

__all__ = ["add_arguments", "backend_options", "deliver", "render_transcript", "run"]

DEFAULT_FORMATS = "srt,vtt,txt,json,docx"



def channel_arg(value: str) -> str:
    """`--channel`'s value, checked as it is parsed (argparse reports a bad one at once)."""
    from engine.audio.channels import parse_channel

    try:
        parse_channel(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value

def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="audio or video files")
    p.add_argument("--backend", choices=sorted(BACKENDS), default="whisper", help="default: whisper")
    p.add_argument("--model", help="model name or local folder (default: the backend's own)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], help="default: auto")
    p.add_argument("--batch-size", type=int, help="chunks decoded together (default: backend's; "
                   "whisper on a CPU: at most 2 per call, in calls side by side)")
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
    p.add_argument("--language", help="whisper: the spoken language (en, de, fr…) or auto to detect it "
                   "(multilingual models; the bundled tiny.en is English-only); default: en")  # fmt: skip
    p.add_argument("--context", help='names and terms to expect, comma separated: "Alice, Kubernetes"')
    p.add_argument(
        "--quality",
        choices=["fast", "accurate"],
        help="whisper: fast (default; batched, broken chunks decoded again) or accurate "
        "(sequential, conditioned on the previous text, with temperature fallback; fewer errors, "
        "slower: see docs/performance.md)",
    )
    p.add_argument("--profile", action="store_true", help="print the seconds each stage took")
    p.add_argument(
        "--audio-stream",
        type=int,
        metavar="N",
        help="which audio stream of a file with several (from 0; default: the one marked default)",
    )
    p.add_argument(
        "--channel",
        default="mix",
        type=channel_arg,
        metavar="WHICH",
        help="which channel to transcribe: mix (the mean of all, default), left, right or a number "
        "from 0 (e.g. a recorder with one microphone per channel)",
    )
    vv = p.add_argument_group("vibevoice options")
    vv.add_argument("--dtype", choices=vibevoice.DTYPES, help="weights' dtype (default: auto)")
    vv.add_argument("--attention", choices=vibevoice.ATTENTIONS, help="attention kernel (default: sdpa)")
    vv.add_argument("--budget", choices=vibevoice.BUDGETS, help="tokens per chunk rule (default: paper)")
    vv.add_argument("--engine", choices=vibevoice.ENGINES, help="decoder (default: murmur)")
    vv.add_argument("--acoustic", choices=vibevoice.ACOUSTIC_MODES, help="audio latents (default: mean)")
    vv.add_argument("--server", metavar="URL", help="--engine server: the VibeVoice vLLM server's URL")
    vv.add_argument("--concurrency", type=int, metavar="K", help="--engine server: requests in flight (8)")
    me = p.add_argument_group("decode engine options (--engine murmur; see docs/engine.md)")
    me.add_argument("--eviction", choices=[*POLICIES, *PRESETS], help="KV-cache eviction (default: none)")
    add_eviction_arguments(me)
    me.add_argument("--repetition-penalty", type=float, metavar="P", help="repeat penalty (default: 1, off)")
    add_speaker_arguments(p)
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
    from engine.pipeline import Pipeline, PipelineConfig

    config = PipelineConfig(
        chunk_seconds=args.chunk_seconds,
        single_pass=args.mode == "single",
        speakers=speaker_config(args),
        audio_stream=args.audio_stream,
        channel=args.channel,
    )
    if cancel.is_set():
        raise Cancelled()
    cluster = cluster_config(args)
    if cluster is not None:
        from engine.cli.cluster_run import transcribe_on_cluster

        return transcribe_on_cluster(args, cluster, config, plan, cancel)
    pipeline = remote_pipeline(args) or Pipeline.create(args.backend, config, **backend_options(args))
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
            fail(f"{path}: {exc}")
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
    pipeline: Any, path: Path, cancel: threading.Event, quiet: bool, profile: bool = False
) -> tuple[Transcript, float]:
    bar = ProgressBar(enabled=not quiet)
    times = StageTimes()
    started = time.perf_counter()
    try:
        transcript = pipeline.run(path, lambda p: (bar(p), times(p)), cancel)
    finally:
        bar.close()
    times.stop()
    seconds = time.perf_counter() - started
    if profile:
        print(f"profile: {path.name}: {times.render()} · total {seconds:.2f} s", file=sys.stderr)
        print(f"profile: {path.name}: {transcript.removed.render()}", file=sys.stderr)
    return transcript, seconds
