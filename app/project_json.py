"""A project's JSON text, made and written in small pieces, so a background save never holds the
interpreter for long (the GUI thread needs it to draw and to take keys).

`write_json(stream, data)` writes `data` (`project.to_dict`: dicts, lists, and iterators for the
transcript's long lists) as UTF-8. Layout: the top-level object and the objects directly in it
(audio, transcript, settings) have one key per line, indented one space per level; a list or
iterator in one of them holds one item per line; every other value, a line of speech with its
words included, is one compact `json.dumps` — C code, tens of microseconds for a line. Pieces
go to the stream in blocks of about `BLOCK` characters, and the writer sleeps `BREATHE` after each:
short pieces alone are not enough, because the GUI thread hands the interpreter back at every call
into Qt and waits up to a switch interval (5 ms) to get it again from a busy writer, twenty times
in one turn of the event loop (a 3-hour save stalled the window 130 ms with 5 ms of its own work);
a writer that rests between blocks leaves it free (8 ms), and a save takes 0.4 s instead of 0.2 s.
Each line of speech is made, encoded and dropped in turn, so a save never holds the whole text
or a parsed copy of the transcript, and what it allocates is freed at once: the collector never
starts a full pass on the writer's thread, which would stop every thread for as long as it takes.

Any JSON reader reads the file; a file with other whitespace (earlier versions indented every
value) reads the same. Floats are written in shortest round-trip form; NaN or infinity raises
ValueError (`allow_nan=False`).
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, BinaryIO

BLOCK = 1 << 15  # characters per write: well under a millisecond to make, join and encode
BREATHE = 0.001  # seconds the writer sleeps after each block, off the interpreter
SPREAD = 2  # objects this shallow get one key per line (the top level, and the objects in it)

_dumps = functools.partial(json.dumps, ensure_ascii=False, allow_nan=False)


def write_json(stream: BinaryIO, data: Mapping[str, Any]) -> None:
    pending: list[str] = []
    size = 0
    for piece in _object(data, 0):
        pending.append(piece)
        size += len(piece)
        if size >= BLOCK:
            stream.write("".join(pending).encode("utf-8"))
            pending, size = [], 0
            time.sleep(BREATHE)
    pending.append("\n")
    stream.write("".join(pending).encode("utf-8"))


def _object(obj: Mapping[str, Any], depth: int) -> Iterator[str]:
    if not obj:
        yield "{}"
        return
    pad = "\n" + " " * (depth + 1)
    separator = "{" + pad
    for key, value in obj.items():
        yield f"{separator}{_dumps(key)}: "
        separator = "," + pad
        if isinstance(value, Mapping) and depth + 1 < SPREAD:
            yield from _object(value, depth + 1)
        elif isinstance(value, list | Iterator):
            yield from _lines(value, depth + 1)
        else:
            yield _dumps(value)
    yield "\n" + " " * depth + "}"


def _lines(items: Iterable[Any], depth: int) -> Iterator[str]:
    pad = "\n" + " " * (depth + 1)
    separator = "[" + pad
    for item in items:
        yield separator + _dumps(item)
        separator = "," + pad
    yield "[]" if separator[0] == "[" else "\n" + " " * depth + "]"
