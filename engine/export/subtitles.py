"""SubRip (.srt) and WebVTT (.vtt) subtitles of a transcript.

Each utterance becomes one or more cues (`engine.export.cues`), sorted by start time. SRT names the
speaker inside the text ("Alice: Hello there"); WebVTT uses a voice span (`<v Alice>Hello there`),
with `&`, `<` and `>` escaped. Utterances without a speaker are written without a label; empty
utterances are left out. Control characters and terminal escapes are dropped
(`engine.export.clean`); a speaker name is always one line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from engine.export.base import ExportOptions, write_lines
from engine.export.clean import clean_utterance, one_line
from engine.export.cues import Cue, split_utterance
from engine.export.timefmt import srt_time, vtt_time
from engine.types import Transcript


def speaker_cues(transcript: Transcript, options: ExportOptions, *, label: bool) -> list[tuple[Cue, str]]:
    """(cue, speaker display name or "") in start order; `label` puts "Name:" into the cue text."""
    out: list[tuple[Cue, str]] = []
    for u in transcript.utterances:
        name = one_line(transcript.speaker_name(u.speaker) or "")
        prefix = f"{name}:" if label and name else ""
        out.extend((cue, name) for cue in split_utterance(clean_utterance(u), options.cues, prefix))
    out.sort(key=lambda pair: pair[0].start)
    return out


@dataclass(frozen=True, slots=True)
class SrtExporter:
    suffix: str = ".srt"

    def write(self, transcript: Transcript, stream: BinaryIO, options: ExportOptions) -> None:
        write_lines(stream, _srt_lines(transcript, options))


@dataclass(frozen=True, slots=True)
class VttExporter:
    suffix: str = ".vtt"

    def write(self, transcript: Transcript, stream: BinaryIO, options: ExportOptions) -> None:
        write_lines(stream, _vtt_lines(transcript, options))


def _srt_lines(transcript: Transcript, options: ExportOptions) -> Iterator[str]:
    for number, (cue, _) in enumerate(speaker_cues(transcript, options, label=True), start=1):
        yield str(number)
        yield f"{srt_time(cue.start)} --> {srt_time(cue.end)}"
        yield from cue.lines
        yield ""


def _vtt_lines(transcript: Transcript, options: ExportOptions) -> Iterator[str]:
    yield "WEBVTT"
    yield ""
    for cue, name in speaker_cues(transcript, options, label=False):
        yield f"{vtt_time(cue.start)} --> {vtt_time(cue.end)}"
        lines = [_escape(line) for line in cue.lines]
        if name:
            lines[0] = f"<v {_escape(name)}>{lines[0]}"
        yield from lines
        yield ""


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
