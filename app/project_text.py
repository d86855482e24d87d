"""A project file's bytes as text, and where they are not what a project file should be.

`decode(raw)` reads UTF-8 with or without a byte-order mark (editors on Windows add one). Bytes
that are not UTF-8 do not make the file unreadable: each run of them is replaced by U+FFFD and
listed as a `BadBytes` (line, column, byte offset, the bytes), so the caller can say precisely
where the damage is and offer what can still be read. `json_position(error)` words a JSON
syntax error the same way (line, column), so a user can find it in any text editor.
Lines and columns count from 1; a column counts characters of the decoded line.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass

MAX_LISTED = 3  # damaged places named in a message; the rest are counted
MAX_FOUND = 100  # damaged places located; past these the rest is decoded in one pass, uncounted


@dataclass(frozen=True, slots=True)
class BadBytes:
    """A run of bytes that are not UTF-8."""

    line: int
    column: int
    offset: int  # from the start of the file, byte-order mark included
    data: bytes

    def __str__(self) -> str:
        shown = " ".join(f"0x{b:02X}" for b in self.data[:4]) + (" …" if len(self.data) > 4 else "")
        return f"line {self.line}, column {self.column} (byte {self.offset:,}: {shown})"


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str  # bad bytes replaced by U+FFFD
    bad: tuple[BadBytes, ...]
    more: bool = False  # more than `MAX_FOUND` places: those past them are not listed


def decode(raw: bytes) -> Decoded:
    """`raw` as text: a UTF-8 byte-order mark dropped, bytes that are not UTF-8 listed and replaced."""
    start = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        return Decoded(raw[start:].decode("utf-8"), ())
    except UnicodeDecodeError:
        pass
    pieces: list[str] = []
    bad: list[BadBytes] = []
    line, line_start, pos = 1, 0, start  # line_start: index in the decoded text where `line` begins
    decoded_len = 0
    while pos < len(raw) and len(bad) < MAX_FOUND:
        try:
            piece = raw[pos:].decode("utf-8")
            end = len(raw)
        except UnicodeDecodeError as exc:
            piece = raw[pos : pos + exc.start].decode("utf-8")
            end = pos + exc.start
            bad_end = pos + exc.end
        pieces.append(piece)
        line += piece.count("\n")
        if "\n" in piece:
            line_start = decoded_len + piece.rindex("\n") + 1
        decoded_len += len(piece)
        if end == len(raw):
            pos = end
            break
        bad.append(BadBytes(line, decoded_len - line_start + 1, end, raw[end:bad_end]))
        pieces.append("\ufffd")
        decoded_len += 1
        pos = bad_end
    rest = raw[pos:].decode("utf-8", errors="replace") if pos < len(raw) else ""
    return Decoded("".join(pieces) + rest, tuple(bad), bool(rest) and "\ufffd" in rest)


def describe(decoded: Decoded) -> str:
    """The damaged places in words: the first few, then how many more."""
    bad = decoded.bad
    listed = "; ".join(str(b) for b in bad[:MAX_LISTED])
    more = f"; and {len(bad) - MAX_LISTED:,} more" if len(bad) > MAX_LISTED else ""
    count = f"{len(bad)}{'+' if decoded.more else ''} places" if len(bad) > 1 else "one place"
    return f"bytes that are not UTF-8 text in {count}: {listed}{more}"


def json_position(error: json.JSONDecodeError) -> str:
    """A JSON syntax error as "line L, column C: what"."""
    return f"line {error.lineno}, column {error.colno}: {error.msg}"
