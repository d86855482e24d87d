"""Reference and hypothesis material for scoring: parsers for STM, RTTM, SegLST, UEM, Rev NLP, text.

Everything is read into `TextSegment`s (speaker, text, optional start/end seconds). A `Reference`
holds a recording's speaker-attributed text (for WER, cpWER, tcpWER), its speaker turns (for DER)
and an optional UEM (scored regions). Files that describe several recordings (one STM or RTTM
for a whole test set) are filtered to the recording's id; a file that describes exactly one other
id is taken as is (references named by file, not by session).

Format details handled here:
- STM: `<file> <channel> <speaker> <start> <end> [<label>] <text>`; `;;` comments, lines whose text
  starts with `<` or is `ignore_time_segment_in_scoring` are left out; tokens that start with an
  apostrophe (TED-LIUM's `i 'd`) are joined to the word before.
- RTTM: `SPEAKER` lines only; SegLST: a JSON list of {session_id, speaker, start_time, end_time,
  words}; UEM: `<file> <channel> <start> <end>`.
- Rev NLP (Earnings-21): `token|speaker|ts|endTs|punctuation|...`, one token a line; consecutive
  tokens of one speaker form a turn. Times are usually empty, so such references are untimed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.errors import MurmurError
from engine.types import Transcript

UNKNOWN_SPEAKER = "unknown"
_CLITIC = re.compile(r" '(?=\w)")
_LABEL = re.compile(r"<[^<>\s]*,[^<>\s]*>\s*")


class ReferenceFileError(MurmurError):
    """A reference file is missing, unreadable or not in the format its name says."""


@dataclass(frozen=True, slots=True)
class TextSegment:
    """Speech by one speaker. Times are absolute seconds, or None for untimed references."""

    speaker: str
    text: str
    start: float | None = None
    end: float | None = None

    @property
    def timed(self) -> bool:
        return self.start is not None and self.end is not None


@dataclass(frozen=True, slots=True)
class Reference:
    """What a recording should be transcribed as."""

    recording_id: str
    segments: tuple[TextSegment, ...]  # speaker-attributed text, in reading order
    turns: tuple[TextSegment, ...] = ()  # speaker turns for DER (text unused)
    uem: tuple[tuple[float, float], ...] = ()  # scored regions; empty: not given

    @property
    def timed(self) -> bool:
        return bool(self.segments) and all(s.timed for s in self.segments)

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.segments if s.text)


def hypothesis_segments(transcript: Transcript) -> tuple[TextSegment, ...]:
    """A transcript's utterances as scorable segments; inverted times are collapsed to the start."""
    return tuple(
        TextSegment(u.speaker or UNKNOWN_SPEAKER, u.text, u.start, max(u.start, u.end))
        for u in transcript.utterances
    )


def parse_stm(text: str, recording_id: str) -> list[TextSegment]:
    rows = []
    for line in text.splitlines():
        fields = line.split(maxsplit=5)
        if not fields or fields[0].startswith(";;") or len(fields) < 5:
            continue
        words = fields[5] if len(fields) == 6 else ""
        if _LABEL.match(words):  # the optional <label> field, e.g. <o,f0,female>
            words = _LABEL.sub("", words, count=1)
        if words.startswith("<") or words.strip().lower() == "ignore_time_segment_in_scoring":
            continue
        start, end = _number(fields[3], line), _number(fields[4], line)
        rows.append((fields[0], TextSegment(fields[2], _CLITIC.sub("'", words.strip()), start, end)))
    return _for_recording(rows, recording_id, "STM")


def parse_rttm(text: str, recording_id: str) -> list[TextSegment]:
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 8 or fields[0] != "SPEAKER":
            continue
        start, duration = _number(fields[3], line), _number(fields[4], line)
        rows.append((fields[1], TextSegment(fields[7], "", start, start + duration)))
    return _for_recording(rows, recording_id, "RTTM")


def parse_seglst(text: str, recording_id: str) -> list[TextSegment]:
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReferenceFileError(f"not a SegLST file: invalid JSON ({exc.msg})") from exc
    if not isinstance(entries, list):
        raise ReferenceFileError("not a SegLST file: expected a JSON list of segments")
    rows = []
    for e in entries:
        try:
            start, end = float(e["start_time"]), float(e["end_time"])
            segment = TextSegment(str(e["speaker"]), str(e["words"]), start, end)
        except (KeyError, TypeError, ValueError) as exc:
            raise ReferenceFileError(f"SegLST segment {e!r} lacks speaker/words/start_time/end_time") from exc
        rows.append((str(e.get("session_id", recording_id)), segment))
    return _for_recording(rows, recording_id, "SegLST")


def parse_uem(text: str, recording_id: str) -> list[tuple[float, float]]:
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 4 and not fields[0].startswith(";;"):
            start, end = _number(fields[2], line), _number(fields[3], line)
            rows.append((fields[0], TextSegment("", "", start, end)))
    return [(s.start or 0.0, s.end or 0.0) for s in _for_recording(rows, recording_id, "UEM")]


def parse_nlp(text: str) -> list[TextSegment]:
    """Rev's NLP token file as speaker turns (timed only when every token has times)."""
    turns: list[tuple[str, list[str], list[float]]] = []
    for line in text.splitlines()[1:]:
        fields = line.split("|")
        if len(fields) < 5 or not fields[0]:
            continue
        token, speaker = fields[0] + fields[4], fields[1]
        times = [float(t) for t in fields[2:4] if _is_float(t)]
        if not turns or turns[-1][0] != speaker:
            turns.append((speaker, [], []))
        turns[-1][1].append(token)
        turns[-1][2].extend(times if len(times) == 2 else [float("nan")])
    segments = []
    for speaker, tokens, times in turns:
        timed = times and all(t == t for t in times)
        start, end = (min(times), max(times)) if timed else (None, None)
        segments.append(TextSegment(speaker, " ".join(tokens), start, end))
    return segments


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReferenceFileError(f"cannot read reference {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ReferenceFileError(f"reference {path} is not UTF-8 text") from exc


def in_reading_order(segments: Iterable[TextSegment]) -> tuple[TextSegment, ...]:
    """Timed segments sorted by start (stable), untimed ones kept in file order."""
    items = list(segments)
    if items and all(s.timed for s in items):
        items.sort(key=lambda s: (s.start, s.end))
    return tuple(items)


def _for_recording(
    rows: Sequence[tuple[str, TextSegment]], recording_id: str, kind: str
) -> list[TextSegment]:
    ids = {rid for rid, _ in rows}
    if recording_id in ids:
        return [s for rid, s in rows if rid == recording_id]
    if len(ids) == 1:
        return [s for _, s in rows]
    if not ids:
        return []
    raise ReferenceFileError(
        f"the {kind} file describes {len(ids)} recordings but not {recording_id!r} "
        f"(it has e.g. {', '.join(sorted(ids)[:3])})"
    )


def _number(value: str, line: str) -> float:
    try:
        return float(value)
    except ValueError as exc:
        raise ReferenceFileError(
            f"expected a time in seconds, got {value!r} in line {line.strip()!r}"
        ) from exc


def _is_float(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True
