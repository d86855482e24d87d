"""The model, language and export flags shared by `murmur record` and `murmur watch`."""

from __future__ import annotations

import argparse
from typing import Any

DEFAULT_FORMATS = "srt,vtt,txt,json,docx"


def add_model_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="whisper model name or local folder (default: the bundled tiny.en)")
    p.add_argument("--language", help="spoken language code (en, de, fr…) or 'auto' to detect it "
                   "(multilingual models only); default: en")  # fmt: skip
    p.add_argument("--format", default=DEFAULT_FORMATS, help=f"export formats (default: {DEFAULT_FORMATS})")


def whisper_options(args: argparse.Namespace) -> dict[str, Any]:
    """`create_backend("whisper", ...)` options from the flags (None: the backend's default)."""
    from engine.backends.whisper import language_setting

    options: dict[str, Any] = {"model": args.model}
    if args.language is not None:
        options["language"] = language_setting(args.language, args.model)
    return {k: v for k, v in options.items() if v is not None}


def formats_of(text: str) -> tuple[str, ...]:
    from engine.export import FORMATS

    formats = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ValueError(f"unknown export format {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(FORMATS)}")  # fmt: skip
    return formats
