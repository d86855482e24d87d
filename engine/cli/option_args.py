"""The argparse side of the option table: each command's option flags generated from
`engine.options.option_rows()`, and the `Recipe` the parsed flags describe.

`add_option_arguments(parser, surface)` adds the rows `surface` offers, grouped by their `group`,
every one defaulting to None ("not given": the config's default stays); on the surfaces that run
any backend it adds `--backend` first. `recipe_of(args)` hands the given values to
`engine.recipe.recipe_from`, the one validation path (ValueError, one message per mistake).
`option_flags(values, surface, backend)` goes the other way: the command line that gives `values`
(the app starts its engine process with it), leaving out what a request sets per job (`Option.form`).
"""

from __future__ import annotations

import argparse
from typing import Any

from engine.backends import BACKENDS
from engine.option_values import option_text
from engine.options import SYSTEM, Option, by_name, rows


def add_option_arguments(p: argparse.ArgumentParser, surface: str, into: Any = None) -> None:
    """Add `--backend` (on the system surfaces) and the table's rows for `surface` to `p`, in
    their groups (or all into the group `into`)."""
    groups: dict[str | None, Any] = {None: p}
    if surface in SYSTEM:
        p.add_argument("--backend", choices=sorted(BACKENDS), default="whisper", help="default: whisper")
    for option in rows(surface):
        if option.group not in groups:
            groups[option.group] = into or p.add_argument_group(option.group)
        _add(into or groups[option.group], option)


def _add(group: Any, option: Option) -> None:
    extra: dict[str, Any] = {"choices": option.choices} if option.choices else {"type": option.kind}
    if option.metavar:
        extra["metavar"] = option.metavar
    if option.bare is not None:
        extra |= {"nargs": "?", "const": option.bare}
    group.add_argument(option.flag, dest=option.name, help=option.help, **extra)


def given_options(args: argparse.Namespace, surface: str) -> dict[str, Any]:
    """The table options given on the command line, by name (not given: left out)."""
    values = {o.name: getattr(args, o.name, None) for o in rows(surface)}
    return {k: v for k, v in values.items() if v is not None}


def recipe_of(args: argparse.Namespace, surface: str, backend: str | None = None) -> Any:
    """The `Recipe` the command line describes (`backend` fixes it where there is no --backend)."""
    from engine.recipe import recipe_from

    return recipe_from(given_options(args, surface), backend or getattr(args, "backend", "whisper"))


def option_flags(values: dict[str, Any], surface: str, backend: str) -> list[str]:
    """The flags of `surface` that give option `values` (by name; None: not given) to `backend`,
    `--backend` first; values a request sets per job (`Option.form`) are left to the requests, and
    a value `surface` does not take is a ValueError naming it."""
    offered = {o.name for o in rows(surface, backend)}
    unknown = sorted(n for n, v in values.items() if v is not None and n not in offered)
    if unknown:
        raise ValueError(f"`murmur {surface}` with the {backend} backend takes no {', '.join(unknown)}")
    flags = ["--backend", backend] if surface in SYSTEM else []
    table = by_name()
    for name, value in values.items():
        option = table[name]
        if value is not None and not option.form:
            flags += [option.flag, option_text(value)]
    return flags
