"""Find the segment objects in a model reply, however broken the JSON around them is.

VibeVoice-ASR replies with a compact JSON array of flat objects (`[{"Start":0,"End":1.5,...},...]`).
A reply can be cut off by the token budget, stopped in a loop, or garbled; `scan_objects` still
finds every object. Each object is anchored at its own `{"<key>":` (a segment key in any of its
spellings), so damage inside one object never hides its neighbours: inside a valid JSON string a
quote is always escaped, so an anchor cannot occur there.

For each anchor, in order:
- if a valid JSON object starts there, it is returned decoded (`value`), `closed=True`;
- otherwise the text up to the next anchor is its `body`: `closed=True` when a closing brace ends
  the object (malformed but complete), `closed=False` when the text runs out first (truncated).
`object_ends(text)` gives the offsets just past each complete object, for rollback boundaries.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

ANCHOR = re.compile(
    r'\{\s*"(?:start|end|speaker|content|text)(?:[ _]?(?:time|id))?"\s*:', re.IGNORECASE
)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class RawObject:
    """One segment object found in a reply; offsets index the scanned text."""

    start: int  # offset of its "{"
    end: int  # offset just past its "}" (closed), or of the end of its text (not closed)
    body: str  # its text
    value: dict[str, Any] | None  # the decoded object when it is valid JSON
    closed: bool  # a closing brace ends it


def scan_objects(text: str) -> list[RawObject]:
    """Every segment object of `text`, valid or not, in order (see the module docstring)."""
    anchors = [m.start() for m in ANCHOR.finditer(text)]
    found: list[RawObject] = []
    for i, start in enumerate(anchors):
        if found and start < found[-1].end:
            continue  # inside a valid object found already (a nested object)
        limit = anchors[i + 1] if i + 1 < len(anchors) else len(text)
        found.append(_object_at(text, start, limit))
    return found


def object_ends(text: str) -> list[int]:
    """Offsets just past each complete (closed) segment object of `text`."""
    return [obj.end for obj in scan_objects(text) if obj.closed]


def _object_at(text: str, start: int, limit: int) -> RawObject:
    try:
        value, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError:
        value, end = None, -1
    if isinstance(value, dict):
        return RawObject(start, end, text[start:end], value, closed=True)
    region = text[start:limit]
    close = closing_brace(region)
    if close is None and limit < len(text):
        close = region.rfind("}") if "}" in region else None  # garbled, but another object follows
    if close is None:
        return RawObject(start, limit, region, None, closed=False)
    return RawObject(start, start + close + 1, region[: close + 1], None, closed=True)


def closing_brace(region: str) -> int | None:
    """Index of the brace closing the object that opens `region`, strings respected; None if none."""
    depth, in_string, escaped = 0, False, False
    for i, ch in enumerate(region):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i if ch == "}" else None
    return None
