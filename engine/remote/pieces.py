"""JSON parsed a value at a time, so a large document never holds the interpreter for long.

`json.loads` is one C call: for a three-hour transcript (6.7 MB, its words included) it holds the
interpreter 0.15–0.3 s, and every other thread of the process — a window drawing, taking keys —
waits that long. `loads(text)` gives the same value (same types, same errors for invalid JSON) but
walks the outer `depth` levels of objects and arrays itself and leaves each value below them (a
line of a transcript with its words: tens of microseconds) to the C decoder; between two values
the interpreter may switch threads.
"""

from __future__ import annotations

import json
import re
from typing import Any

DEPTH = 4  # levels walked here: event → transcript → its list of lines → a line
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def loads(text: str, depth: int = DEPTH) -> Any:
    value, end = _value(text, _skip(text, 0), depth)
    if _skip(text, end) != len(text):
        raise json.JSONDecodeError("Extra data", text, _skip(text, end))
    return value


def _skip(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]  # matches the empty string


def _value(text: str, at: int, depth: int) -> tuple[Any, int]:
    opening = text[at : at + 1]
    if depth <= 0 or opening not in ("{", "["):
        return _DECODER.raw_decode(text, at)
    return (_object if opening == "{" else _array)(text, _skip(text, at + 1), depth - 1)


def _array(text: str, at: int, depth: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    if text[at : at + 1] == "]":
        return items, at + 1
    while True:
        item, at = _value(text, at, depth)
        items.append(item)
        at = _skip(text, at)
        if text[at : at + 1] == "]":
            return items, at + 1
        at = _skip(text, _expect(text, at, ","))


def _object(text: str, at: int, depth: int) -> tuple[dict[str, Any], int]:
    members: dict[str, Any] = {}
    if text[at : at + 1] == "}":
        return members, at + 1
    while True:
        if text[at : at + 1] != '"':
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, at)
        key, at = _DECODER.raw_decode(text, at)
        at = _skip(text, _expect(text, _skip(text, at), ":"))
        members[key], at = _value(text, at, depth)
        at = _skip(text, at)
        if text[at : at + 1] == "}":
            return members, at + 1
        at = _skip(text, _expect(text, at, ","))


def _expect(text: str, at: int, char: str) -> int:
    if text[at : at + 1] != char:
        raise json.JSONDecodeError(f"Expecting '{char}' delimiter", text, at)
    return at + 1
