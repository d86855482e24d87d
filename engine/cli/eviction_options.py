"""Command-line flags that tune a KV eviction policy (`engine.decode.eviction`), shared by commands.

Every flag defaults to None, meaning "the policy's or preset's own value"; the names match the
fields of `engine.decode.config.EngineConfig` (and of the VibeVoice backend's engine options).
"""

from __future__ import annotations

import argparse
from typing import Any

EVICTION_FLAGS = (
    "sink",
    "window",
    "delay",
    "speech_rate",
    "speech_sink",
    "speech_layers",
    "look_back",
    "look_ahead",
)


def add_eviction_arguments(group: Any) -> None:
    """Add the tuning flags to a parser or argument group."""
    group.add_argument("--sink", type=int, metavar="N", help="output sink tokens kept (default: 4)")
    group.add_argument(
        "--window", type=int, metavar="W", help="tokens per eviction window, output and speech"
    )
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
        help='per-layer speech settings, e.g. \'[{"start": 14, "end": null, "window": 512}]\'; '
        "layers outside every range keep all speech",
    )
    group.add_argument(
        "--look-back", type=int, metavar="N", help="speech-anchor: tokens kept before the anchor"
    )
    group.add_argument(
        "--look-ahead", type=int, metavar="N", help="speech-anchor: last speech tokens always kept"
    )


def eviction_options(args: argparse.Namespace) -> dict[str, Any]:
    """The tuning flags that were given, by EngineConfig field name."""
    return {k: getattr(args, k) for k in EVICTION_FLAGS if getattr(args, k, None) is not None}
