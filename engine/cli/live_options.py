"""The option and export flags shared by `murmur record` and `murmur watch` (whisper only).

Their model, language and speaker flags are rows of the option table (`engine.options`) offered
on these surfaces; `live_recipe` reads them into a whisper `Recipe` through the one validation path.
"""

from __future__ import annotations

import argparse
from typing import Any

from engine.cli.option_args import add_option_arguments, recipe_of

DEFAULT_FORMATS = "srt,vtt,txt,json,docx"


def add_model_arguments(p: argparse.ArgumentParser, surface: str) -> None:
    add_option_arguments(p, surface)
    p.add_argument("--format", default=DEFAULT_FORMATS, help=f"export formats (default: {DEFAULT_FORMATS})")


def live_recipe(args: argparse.Namespace, surface: str) -> Any:
    """The whisper `Recipe` the flags describe (None: the defaults)."""
    return recipe_of(args, surface, "whisper")


def formats_of(text: str) -> tuple[str, ...]:
    from engine.export import FORMATS

    formats = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ValueError(f"unknown export format {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(FORMATS)}")  # fmt: skip
    return formats
