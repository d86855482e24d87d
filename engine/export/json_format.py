"""Murmur's own transcript file (.json): lossless, so `read_json(path)` gives back an equal Transcript
(through `engine.export`, `source` is the recording's file name, without its folders).

Layout: an object with `"format": "murmur-transcript"`, `"version": 1`, the transcript's scalar
fields (source, model, language, duration), `removed` (what the clean-up steps removed:
{boundary_words, merge_words, rollback_tokens, salvage_tokens}; optional on reading), then the
lists `speakers` ({id, name}, plus `score` for a
name recognised from a known voice), `chunks` ({index, start, end, speech: [[start, end], ...]}) and
`utterances` ({start, end, text, speaker, words: [{start, end, text, probability}, ...]}), one
item per line. Floats are written in shortest
round-trip form; NaN or infinite times are refused with ValueError. Export options do not apply.
A file that is missing, not JSON, or not this format raises `TranscriptFormatError`, and so does
one holding NaN/Infinity, a time `engine.finite` refuses, or a string with a lone surrogate.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, BinaryIO

from engine.errors import TranscriptFormatError
from engine.export.base import ExportOptions, write_lines
from engine.finite import transcript_time_problem
from engine.types import Chunk, Removed, Speaker, SpeechSegment, Transcript, Utterance, Word

FORMAT = "murmur-transcript"
VERSION = 1

_dumps = functools.partial(json.dumps, ensure_ascii=False, allow_nan=False)


@dataclass(frozen=True, slots=True)
class JsonExporter:
    suffix: str = ".json"

    def write(self, transcript: Transcript, stream: BinaryIO, options: ExportOptions) -> None:
        write_lines(stream, _lines(transcript))


def transcript_dict(t: Transcript, *, lazy: bool = False) -> dict[str, Any]:
    """The JSON object this format writes, as Python data (for a file that embeds a transcript,
    without writing it out and parsing it back). `lazy`: `chunks` and `utterances` are iterators
    that build each item as it is read, so a writer can encode and drop one item at a time."""
    out = _head(t)
    out["removed"] = asdict(t.removed)
    out["speakers"] = [_speaker_dict(s) for s in t.speakers]
    chunks, utterances = map(_chunk_dict, t.chunks), map(_utterance_dict, t.utterances)
    out["chunks"] = chunks if lazy else list(chunks)
    out["utterances"] = utterances if lazy else list(utterances)
    return out


def _head(t: Transcript) -> dict[str, Any]:
    head = {"format": FORMAT, "version": VERSION, "source": t.source, "model": t.model}
    return head | {"language": t.language, "duration": t.duration}


def _lines(t: Transcript) -> Iterator[str]:
    yield "{"
    for key, value in _head(t).items():
        yield f"  {_dumps(key)}: {_dumps(value)},"
    yield f'  "removed": {_dumps(asdict(t.removed))},'
    yield from _list_lines("speakers", [_speaker_dict(s) for s in t.speakers], last=False)
    yield from _list_lines("chunks", map(_chunk_dict, t.chunks), last=False)
    yield from _list_lines("utterances", map(_utterance_dict, t.utterances), last=True)
    yield "}"


def _list_lines(key: str, items: Iterator[dict] | list[dict], *, last: bool) -> Iterator[str]:
    close = "" if last else ","
    rows = iter(items)
    row = next(rows, None)
    if row is None:
        yield f"  {_dumps(key)}: []{close}"
        return
    yield f"  {_dumps(key)}: ["
    for following in rows:
        yield f"    {_dumps(row)},"
        row = following
    yield f"    {_dumps(row)}"
    yield f"  ]{close}"


def _speaker_dict(s: Speaker) -> dict[str, Any]:
    known = {} if s.score is None else {"score": s.score}
    return {"id": s.id, "name": s.name} | known


def _chunk_dict(c: Chunk) -> dict[str, Any]:
    return {"index": c.index, "start": c.start, "end": c.end, "speech": [[s.start, s.end] for s in c.speech]}


def _utterance_dict(u: Utterance) -> dict[str, Any]:
    words = [{"start": w.start, "end": w.end, "text": w.text, "probability": w.probability} for w in u.words]
    return {"start": u.start, "end": u.end, "text": u.text, "speaker": u.speaker, "words": words}


def read_json(path: str | os.PathLike[str]) -> Transcript:
    """The transcript saved at `path` by the JSON exporter."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"), parse_constant=_no_constant)
    except OSError as e:
        raise TranscriptFormatError(f"cannot read transcript {path}: {e.strerror or e}") from e
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TranscriptFormatError(f"{path} is not a Murmur transcript: it is not valid JSON") from e
    except TranscriptFormatError as e:
        raise TranscriptFormatError(f"{path} is not a valid Murmur transcript: {e}") from e
    try:
        return transcript_from_dict(data)
    except TranscriptFormatError as e:
        raise TranscriptFormatError(f"{path} is not a valid Murmur transcript: {e}") from e


def _no_constant(name: str) -> Any:
    raise TranscriptFormatError(f"{name} is not a number a transcript can hold")


def transcript_from_dict(data: Any) -> Transcript:
    """A transcript from the parsed JSON object; TranscriptFormatError names the first bad field."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TranscriptFormatError(f'no "format": "{FORMAT}" header')
    version = data.get("version")
    if version != VERSION:
        newer = isinstance(version, int) and not isinstance(version, bool) and version > VERSION
        reason = "it was written by a newer Murmur" if newer else "unknown version"
        raise TranscriptFormatError(f"{reason} (format version {version!r}, this Murmur reads {VERSION})")
    transcript = Transcript(
        utterances=_items(data, "utterances", _utterance),
        speakers=_items(data, "speakers", _speaker),
        duration=_get(data, "duration", "number", "", default=0.0),
        source=_get(data, "source", "text", "", default=None, nullable=True),
        model=_get(data, "model", "text", "", default=None, nullable=True),
        language=_get(data, "language", "text", "", default="en"),
        chunks=_items(data, "chunks", _chunk),
        removed=_removed(_get(data, "removed", "object", "", default={})),
    )
    problem = transcript_time_problem(transcript)
    if problem is not None:
        raise TranscriptFormatError(problem)
    return transcript


def _removed(obj: dict) -> Removed:
    return Removed(**{f.name: _get(obj, f.name, "int", "removed", default=0) for f in fields(Removed)})


def _speaker(obj: dict, where: str) -> Speaker:
    return Speaker(
        id=_get(obj, "id", "text", where),
        name=_get(obj, "name", "text", where),
        score=_get(obj, "score", "number", where, default=None, nullable=True),
    )


def _chunk(obj: dict, where: str) -> Chunk:
    pairs = _get(obj, "speech", "list", where, default=[])
    return Chunk(
        index=_get(obj, "index", "int", where),
        start=_get(obj, "start", "number", where),
        end=_get(obj, "end", "number", where),
        speech=tuple(_segment(pair, f"{where}.speech[{i}]") for i, pair in enumerate(pairs)),
    )


def _segment(pair: Any, where: str) -> SpeechSegment:
    if isinstance(pair, list) and len(pair) == 2 and all(_is_number(v) for v in pair):
        with contextlib.suppress(ValueError, OverflowError):
            return SpeechSegment(float(pair[0]), float(pair[1]))
    raise TranscriptFormatError(f"{where}: expected [start, end] with 0 ≤ start ≤ end")


def _utterance(obj: dict, where: str) -> Utterance:
    return Utterance(
        start=_get(obj, "start", "number", where),
        end=_get(obj, "end", "number", where),
        text=_get(obj, "text", "text", where),
        speaker=_get(obj, "speaker", "text", where, default=None, nullable=True),
        words=_items(obj, "words", _word, where),
    )


def _word(obj: dict, where: str) -> Word:
    return Word(
        start=_get(obj, "start", "number", where),
        end=_get(obj, "end", "number", where),
        text=_get(obj, "text", "text", where),
        probability=_get(obj, "probability", "number", where, default=None, nullable=True),
    )


def _items(obj: dict, key: str, parse: Callable[[dict, str], Any], where: str = "") -> tuple:
    """`obj[key]` parsed item by item; a missing key is an empty list."""
    items: Sequence[Any] = _get(obj, key, "list", where, default=[])
    out = []
    for i, item in enumerate(items):
        here = f"{where}.{key}[{i}]" if where else f"{key}[{i}]"
        if not isinstance(item, dict):
            raise TranscriptFormatError(f"{here}: expected an object")
        out.append(parse(item, here))
    return tuple(out)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "number": (_is_number, "a number"),
    "int": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "text": (lambda v: isinstance(v, str), "a string"),
    "list": (lambda v: isinstance(v, list), "a list"),
    "object": (lambda v: isinstance(v, dict), "an object"),
}
_REQUIRED = object()
_SURROGATE = re.compile("[\ud800-\udfff]")


def _get(
    obj: dict, key: str, kind: str, where: str, *, default: Any = _REQUIRED, nullable: bool = False
) -> Any:
    here = f"{where}.{key}" if where else key
    if key not in obj:
        if default is _REQUIRED:
            raise TranscriptFormatError(f"{here}: missing")
        return default
    value = obj[key]
    if value is None and nullable:
        return None
    check, noun = _KINDS[kind]
    if not check(value):
        raise TranscriptFormatError(f"{here}: expected {noun}, found {type(value).__name__}")
    if kind == "text" and _SURROGATE.search(value):
        raise TranscriptFormatError(f"{here}: contains an invalid character (a lone surrogate)")
    if kind != "number":
        return value
    try:
        number = float(value)
    except OverflowError:
        raise TranscriptFormatError(f"{here}: number out of range") from None
    if not math.isfinite(number):
        raise TranscriptFormatError(f"{here}: expected a finite number, found {number}")
    return number
