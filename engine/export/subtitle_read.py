"""SubRip (.srt) and WebVTT (.vtt) files read back into a transcript, for review and editing.

`parse_subtitles(text)` takes either format: each cue becomes one utterance (times as written,
text lines joined by a space). Speakers come from WebVTT voice spans (`<v Alice>`) or, in
SubRip, from a leading "Name:" of at most four words (as Murmur writes it); markup (`<i>`,
`<b>`, `<font>`, `<c.x>`, inline timestamps) is dropped, other text in angle brackets kept,
and `&amp;`, `&lt;`, `&gt;` unescaped.
`read_subtitles(path)` reads a file (UTF-8, a byte-order mark allowed). Anything that is not a
subtitle file — no cue, a time that does not parse, an end before its start — raises
`TranscriptFormatError` naming the line.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

from engine.errors import TranscriptFormatError
from engine.types import Speaker, Transcript, Utterance

TIME = r"(?:(\d+):)?(\d{1,2}):(\d{2})[,.](\d{1,3})"
TIMING = re.compile(rf"^\s*{TIME}\s*-->\s*{TIME}(?:\s.*)?$")
VOICE = re.compile(r"^<v(?:\.[\w.-]+)?\s+([^>]+)>")
TAG = re.compile(r"</?(?:[ibu]|font|c|v|ruby|rt|lang)(?:[.\s][^>]*)?>|<\d{1,2}:[\d:.]+>")  # markup, not text
LABEL = re.compile(r"^([^\s:][^:]{0,40}?):\s+(?=\S)")
MAX_LABEL_WORDS = 4


def _seconds(hours: str | None, minutes: str, seconds: str, fraction: str) -> float:
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds) + int(fraction.ljust(3, "0")) / 1000


def _speaker_and_text(lines: list[str]) -> tuple[str | None, str]:
    first = lines[0] if lines else ""
    voice = VOICE.match(first)
    name = voice.group(1).strip() if voice else None
    text = " ".join(html.unescape(TAG.sub("", line)).strip() for line in lines).strip()
    if name is None and (label := LABEL.match(text)) and len(label.group(1).split()) <= MAX_LABEL_WORDS:
        name, text = label.group(1).strip(), text[label.end() :]
    return (html.unescape(name) if name else None), text


def parse_subtitles(text: str) -> Transcript:
    """A transcript of the cues in SubRip or WebVTT `text`."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    cues: list[tuple[float, float, list[str]]] = []
    current: tuple[float, float, list[str]] | None = None
    for number, line in enumerate(lines, start=1):
        if current is not None:
            if line.strip():
                current[2].append(line)
                continue
            cues.append(current)
            current = None
        elif (timing := TIMING.match(line)) is not None:
            start, end = _seconds(*timing.groups()[:4]), _seconds(*timing.groups()[4:])
            if end < start:
                raise TranscriptFormatError(f"line {number}: the cue ends before it starts")
            current = (start, end, [])
        elif "-->" in line:
            raise TranscriptFormatError(f"line {number}: not a subtitle time: {line.strip()[:60]!r}")
    if current is not None:
        cues.append(current)
    if not cues:
        raise TranscriptFormatError("no subtitle cues found (not an SRT or WebVTT file?)")
    ids: dict[str, str] = {}
    utterances = []
    for start, end, body in cues:
        name, said = _speaker_and_text(body)
        speaker = ids.setdefault(name, f"S{len(ids) + 1}") if name else None
        utterances.append(Utterance(start, end, said, speaker))
    utterances.sort(key=lambda u: (u.start, u.end))
    speakers = tuple(Speaker(sid, name) for name, sid in ids.items())
    return Transcript(tuple(utterances), speakers, duration=max(u.end for u in utterances))


def read_subtitles(path: str | os.PathLike[str]) -> Transcript:
    """The transcript of the subtitle file at `path`, its source left unset."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as e:
        raise TranscriptFormatError(f"cannot read {path}: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise TranscriptFormatError(f"{path} is not UTF-8 text (byte {e.start})") from e
    try:
        return parse_subtitles(text)
    except TranscriptFormatError as e:
        raise TranscriptFormatError(f"{path.name}: {e}") from e
