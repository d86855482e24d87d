"""The `murmur` command line: one subcommand per module, registered in `COMMANDS`.

Each subcommand module offers `add_arguments(parser)` and `run(args) -> int` (the exit code).
User errors (`engine.errors.MurmurError`, bad option values) print one line and exit 1;
a cancel (Ctrl-C) exits 130 and writes nothing half-done; a second Ctrl-C exits 130 at once
(`engine.cli.interrupt`, installed before anything heavy is imported; `args.cancel` is the event
it sets). Only this package prints.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
import threading
from collections.abc import Sequence

from engine import __version__
from engine.cli.interrupt import install as install_interrupt

# subcommand → (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "transcribe": ("engine.cli.transcribe", "transcribe recordings into speaker-labelled transcripts"),
    "eval": ("engine.cli.eval", "score a system on a dataset: WER, DER, cpWER, tcpWER and speed"),
    "bench": ("engine.cli.bench", "run a sweep of systems on a dataset and print the comparison table"),
    "synth-corpus": ("engine.cli.synth", "generate a synthetic long-form test corpus with exact references"),
    "kv-plan": ("engine.cli.kv_plan", "compare eviction policies' kept KV, memory and attention traffic"),
    "serve": ("engine.cli.serve", "serve transcription over HTTP (OpenAI-compatible), batching every client"),
    "record": ("engine.cli.record", "record from a microphone to FLAC, transcribing live with --live"),
    "watch": ("engine.cli.watch", "transcribe every new recording that appears in a folder, once"),
    "voices": ("engine.cli.voices", "remember voices by name, so transcripts name those speakers"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="murmur", description="Long-form, speaker-attributed speech recognition."
    )
    parser.add_argument("--version", action="version", version=f"murmur {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text[:1].upper() + help_text[1:] + ".")
        importlib.import_module(module).add_arguments(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    cancel = threading.Event()
    previous = install_interrupt(cancel)  # before the heavy imports: an early Ctrl-C is handled too
    try:
        return _main(argv, cancel)
    finally:
        signal.signal(signal.SIGINT, previous)


def _main(argv: Sequence[str] | None, cancel: threading.Event) -> int:
    args = build_parser().parse_args(argv)
    args.cancel = cancel
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    module = importlib.import_module(COMMANDS[args.command][0])
    return int(module.run(args))


if __name__ == "__main__":
    sys.exit(main())
