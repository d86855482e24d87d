"""The option table's value parsers (`engine.options`): each turns a flag's text (or a form
field's, a sweep file's, a saved setting's) into the value its row sets, or refuses it with an
`argparse.ArgumentTypeError` whose message argparse prints as the flag's error; `option_text` is
the way back, a value as its flag or form field takes it. No torch, no Qt."""

from __future__ import annotations

import argparse
import re
from typing import Any

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


def memory_size(text: str) -> int:
    """Bytes from `8GiB`, `500MB`, `1.5gb` or a plain number of bytes."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS or float(match.group(1)) * _UNITS[unit] < 1:
        raise argparse.ArgumentTypeError(f"not a memory size: {text!r} (e.g. 8GiB, 500MB, 1000000)")
    return int(float(match.group(1)) * _UNITS[unit])


def terms(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Names and terms from "Alice, Kubernetes" (or a sequence of them), blanks and repeats dropped."""
    items = value.replace("\n", ",").split(",") if isinstance(value, str) else value
    return tuple(dict.fromkeys(str(t).strip() for t in items if str(t).strip()))


def channel_arg(value: str) -> str:
    """`--channel`'s value, checked as it is parsed (argparse reports a bad one at once)."""
    from engine.audio.channels import parse_channel

    try:
        parse_channel(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def language_code(value: str) -> str:
    """A spoken-language choice as `WhisperConfig.language` takes it: a code (en, de…) or "auto"."""
    code = value.strip().lower()
    if code in ("auto", "detect"):
        return "auto"
    if not code.isalpha() or not 2 <= len(code) <= 3:
        raise argparse.ArgumentTypeError(f"a language is a code like en, de or fr (or auto), not {value!r}")
    return code


def option_text(value: Any) -> str:
    """A value as its flag or form field takes it: terms comma separated, the rest as text."""
    return ", ".join(value) if isinstance(value, tuple | list) else str(value)
