"""`--loop-recovery on|off` and `--inversions repair|drop`: run a system the way the paper's harness did.

`--loop-recovery off` lets a looping chunk decode on to its token budget and keeps what it wrote
(the paper; Murmur's default rolls the chunk back and retries); `--inversions drop` drops segments
whose end the model wrote before their start (the paper's filtering; Murmur's default repairs
them). Both apply to every system of a sweep; loop recovery only to backends that have it.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from typing import Any

LOOP_BACKENDS = ("vibevoice",)  # backends with a loop_recovery option


def add_paper_switches(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("paper's behaviour")
    g.add_argument(
        "--loop-recovery", choices=("on", "off"), default="on",
        help="on (default): roll a looping chunk back and retry; off: keep what it wrote (the paper)",
    )  # fmt: skip
    g.add_argument(
        "--inversions", choices=("repair", "drop"), default="repair",
        help="segments with inverted times: repair them (default) or drop them (the paper)",
    )  # fmt: skip


def apply_paper_switches(systems: Sequence[Any], args: argparse.Namespace) -> list[Any]:
    """The systems with the switches applied (unchanged when both are at their defaults)."""
    out = []
    for system in systems:
        if args.loop_recovery == "off" and system.backend in LOOP_BACKENDS:
            system = system.with_options({"loop_recovery": False})
        if args.inversions != system.inversions:
            system = dataclasses.replace(system, inversions=args.inversions)
        out.append(system)
    return out
