"""Model reply → chunk-local `Segment`s, losing nothing the reply holds.

Guarantees of `parse_reply(text, duration)`:
- every complete segment object is returned, whatever surrounds it: a reply cut off by the token
  budget, a loop, garbage between objects, a missing comma or bracket, a markdown fence;
- a truncated last object keeps the text it has, flagged "partial"; a closed but invalid object is
  read field by field, flagged "malformed";
- keys in any spelling: `Start`/`Start time`, `End`/`End time`, `Speaker`/`Speaker ID`,
  `Content`/`Text` (case, spaces and underscores ignored); times as numbers, numeric strings or
  clock strings (`HH:MM:SS.ss`, `MM:SS.ss`); speakers as ints or strings holding a number;
- text is kept verbatim (stripped), bracketed non-speech tags such as `[Music]` included;
- times are repaired from neighbours and flagged: "out_of_range" (outside [0, duration], then
  clamped), "inverted" (end before start: end := next segment's start, else the chunk end),
  "missing_time" (start := previous end, end := next start or the chunk end);
- a reply with no segment object at all but some plain (non-JSON) text becomes one "unparsed"
  segment spanning the chunk;
- every segment has a speaker: one the model wrote without one takes the speaker of the segment
  before it (else the one after it, else speaker 0) and is flagged "missing_speaker".
Times are seconds relative to the chunk start; speakers are the model's chunk-local integers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from engine.backends.vibevoice.jsonscan import RawObject, scan_objects
from engine.types import Segment

TOLERANCE = 0.01  # seconds past the chunk end still taken as the model's rounding, not an error
_KEYS = {
    "start": "start", "starttime": "start",
    "end": "end", "endtime": "end",
    "speaker": "speaker", "speakerid": "speaker",
    "content": "text", "text": "text",
}  # fmt: skip
_FIELD = re.compile(
    r'"(?P<key>[A-Za-z _]{3,12})"\s*:\s*'
    r'(?P<value>-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|"(?:[^"\\]|\\.)*(?:"|\\?$)|null)'
)
_CLOCK = re.compile(r"(?:(\d+):)?(\d+):(\d+(?:\.\d*)?)")
_HEADER = re.compile(r"^\s*(?:<\|im_start\|>)?\s*assistant\s*", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+")
_TRAILING_HIGH_SURROGATE = re.compile("[\ud800-\udbff]$")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(slots=True)
class _Draft:
    start: float | None
    end: float | None
    speaker: int | None
    text: str
    flags: list[str] = field(default_factory=list)


def parse_reply(text: str, duration: float) -> tuple[Segment, ...]:
    """The segments of one reply for a chunk of `duration` seconds (see the module contract)."""
    objects = scan_objects(text)
    if not objects:
        rest = _HEADER.sub("", text).strip()
        if not rest or rest[0] in "[{`" or "assistant".startswith(rest.lower()):
            return ()  # nothing yet, or JSON cut off before its first segment's words
        return (Segment(0.0, max(duration, 0.0), rest, 0, flags=("unparsed", "missing_speaker")),)
    drafts = [d for d in (_draft(obj) for obj in objects) if d is not None]
    return tuple(_repair(_with_speakers(drafts), max(duration, 0.0)))


def _with_speakers(drafts: list[_Draft]) -> list[_Draft]:
    """Each draft without a speaker takes its neighbour's (previous first), else speaker 0."""
    known = [d.speaker for d in drafts]
    for i, d in enumerate(drafts):
        if d.speaker is None:
            before = next((s for s in reversed(known[:i]) if s is not None), None)
            after = next((s for s in known[i + 1 :] if s is not None), None)
            d.speaker = before if before is not None else after if after is not None else 0
            _flag(d, "missing_speaker")
    return drafts


def _draft(obj: RawObject) -> _Draft | None:
    fields = _normalise(obj.value) if obj.value is not None else _lenient_fields(obj.body)
    text = _text(fields.get("text"))
    flags = [] if obj.value is not None else ["malformed" if obj.closed else "partial"]
    if not obj.closed and not text:
        return None  # cut off before any of its words: nothing to keep
    return _Draft(
        start=parse_time(fields.get("start")),
        end=parse_time(fields.get("end")),
        speaker=parse_speaker(fields.get("speaker")),
        text=text,
        flags=flags,
    )


def kept_times(obj: RawObject) -> tuple[float | None, float | None] | None:
    """Start and End (seconds) of an object as the transcript reads it; None when it keeps nothing
    of it (an object cut off before any of its words)."""
    draft = _draft(obj)
    return None if draft is None else (draft.start, draft.end)


def _normalise(value: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, v in value.items():
        name = _KEYS.get(re.sub(r"[\s_]", "", str(key).lower()))
        if name is not None and name not in out:
            out[name] = v
    return out


def _lenient_fields(body: str) -> dict[str, Any]:
    """Fields of an object that is not valid JSON, read one `"key": value` at a time."""
    out: dict[str, Any] = {}
    for m in _FIELD.finditer(body):
        name = _KEYS.get(re.sub(r"[\s_]", "", m.group("key").lower()))
        if name is not None and name not in out:
            out[name] = _lenient_value(m.group("value"), body[m.end("value") :] if name == "text" else "")
    return out


def _lenient_value(raw: str, after: str) -> Any:
    if not raw.startswith('"'):
        return None if raw == "null" else float(raw)
    closed = len(raw) > 1 and raw.endswith('"') and not raw.endswith('\\"')
    inner = raw[1:-1] if closed else raw[1:] + after  # an unclosed string runs to the body's end
    if not closed:
        inner = inner.rstrip().rstrip("]}, \n").rstrip('"')
    return unescape(inner)


def unescape(inner: str) -> str:
    """A JSON string's content decoded; a cut-off escape at the end is dropped, never an error."""
    decoded = inner.replace('\\"', '"').replace("\\\\", "\\")
    for candidate in (inner, re.sub(r"\\(u[0-9a-fA-F]{0,3})?$", "", inner)):
        try:
            decoded = str(json.loads(f'"{candidate}"'))
            break
        except json.JSONDecodeError:
            continue
    return _TRAILING_HIGH_SURROGATE.sub("", decoded)  # half of a pair cut off: dropped


def parse_time(value: Any) -> float | None:
    """Seconds from a number, a numeric string or a clock string; None when there is none."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value) if value == value else None  # NaN is no time
    text = str(value).strip().rstrip("s").strip()
    m = _CLOCK.fullmatch(text)
    if m:
        hours, minutes, seconds = m.groups()
        return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
    try:
        return float(text)
    except ValueError:
        return None


def parse_speaker(value: Any) -> int | None:
    """The chunk-local speaker number: an int, or the first number in a string ("Speaker 2")."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    m = _NUMBER.search(str(value))
    return int(m.group()) if m else None


def _text(value: Any) -> str:
    """The segment's text, stripped; a lone surrogate becomes U+FFFD so the text encodes as UTF-8."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return _SURROGATE.sub("\ufffd", text).strip()


def _repair(drafts: list[_Draft], duration: float) -> list[Segment]:
    """Clamp, fill and un-invert times from neighbours, flagging each repair."""
    for d in drafts:
        for name in ("start", "end"):
            t = getattr(d, name)
            if t is not None and not 0.0 <= t <= duration + TOLERANCE:
                _flag(d, "out_of_range")
            if t is not None:
                setattr(d, name, min(max(t, 0.0), duration))
    segments = []
    for i, d in enumerate(drafts):
        previous_end = segments[-1].end if segments else 0.0
        next_start = _next_start(drafts, i)
        start, end = d.start, d.end
        if start is None:
            _flag(d, "missing_time")
            start = min(previous_end, end if end is not None else previous_end)
        if end is None:
            _flag(d, "missing_time")
            end = next_start if next_start is not None and next_start >= start else duration
        elif end < start:
            _flag(d, "inverted")
            end = next_start if next_start is not None and next_start >= start else duration
        segments.append(Segment(start, end, d.text, d.speaker, flags=tuple(d.flags)))
    return segments


def _next_start(drafts: list[_Draft], i: int) -> float | None:
    return next((d.start for d in drafts[i + 1 :] if d.start is not None), None)


def _flag(d: _Draft, flag: str) -> None:
    if flag not in d.flags:
        d.flags.append(flag)
