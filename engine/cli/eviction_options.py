"""Command-line flags that tune a KV eviction policy (`engine.decode.eviction`), shared by commands.

Every flag defaults to None, meaning "the policy's or preset's own value"; the names match the
fields of `engine.decode.config.EngineConfig` (and of the VibeVoice backend's engine options).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

EVICTION_FLAGS = (
    "sink",
    "window",
    "delay",
    "speech_rate",
    "speech_sink",
    "speech_layers",
    "speech_cap",
    "look_back",
    "look_ahead",
    "output_window",
    "speech_window",
)


def add_eviction_arguments(group: Any) -> None:
    """Add the tuning flags (and `--kv-memory`) to a parser or argument group."""
    group.add_argument(
        "--kv-memory", type=memory_size, metavar="SIZE", dest="kv_memory_limit",
        help="KV memory budget, e.g. 8GiB or 500MB: rows are admitted while they fit it at the size "
        "their eviction policy keeps (default: the device's free memory less a reserve)",
    )  # fmt: skip
    group.add_argument("--sink", type=int, metavar="N", help="output sink tokens kept (default: 4)")
    group.add_argument(
        "--window", type=int, metavar="W",
        help="the policy's window in tokens (output: outputs kept; speech policies: speech); "
        "`both` has two: use --output-window / --speech-window",
    )  # fmt: skip
    group.add_argument(
        "--output-window", type=int, metavar="W", help="recent output tokens kept (default: 1024)"
    )
    group.add_argument("--speech-window", type=int, metavar="W", help="speech window, tokens (default: 512)")
    group.add_argument(
        "--delay", type=int, metavar="D", help="decode steps before speech eviction (default: 32)"
    )
    group.add_argument(
        "--speech-rate",
        type=float,
        metavar="R",
        help="speech tokens dropped per step after the delay (default: 8)",
    )
    group.add_argument("--speech-sink", type=int, metavar="N", help="pinned speech tokens (default: 32)")
    group.add_argument(
        "--speech-layers",
        metavar="JSON",
        help='per-layer speech settings, e.g. \'[{"start": 0, "end": 20, "keep": true}]\'; '
        "layers outside every range use the policy's settings (as in the authors' code)",
    )
    group.add_argument(
        "--speech-cap",
        choices=("row", "batch-min"),
        help="what caps speech eviction (speech, both): each row's own span (row, default) or the "
        "shortest span among the rows decoded together (batch-min: the authors' batching, Table 4)",
    )
    group.add_argument(
        "--look-back", type=int, metavar="N", help="speech-anchor: tokens kept before the anchor"
    )
    group.add_argument(
        "--look-ahead", type=int, metavar="N", help="speech-anchor: last speech tokens always kept"
    )


_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


def memory_size(text: str) -> int:
    """Bytes from `8GiB`, `500MB`, `1.5gb` or a plain number of bytes."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS or float(match.group(1)) * _UNITS[unit] < 1:
        raise argparse.ArgumentTypeError(f"not a memory size: {text!r} (e.g. 8GiB, 500MB, 1000000)")
    return int(float(match.group(1)) * _UNITS[unit])


def eviction_options(args: argparse.Namespace) -> dict[str, Any]:
    """The tuning flags that were given, by EngineConfig field name."""
    return {k: getattr(args, k) for k in EVICTION_FLAGS if getattr(args, k, None) is not None}
