"""What every exporter shares: the `Exporter` protocol, `ExportOptions`, and speaker/utterance helpers.

An exporter turns a `Transcript` into the bytes of one file format, written to a binary stream.
Speakers appear under their display names (`Transcript.speaker_name`); an utterance without a
speaker gets no label, or `UNKNOWN_SPEAKER` where a format requires one.

Options apply where they make sense: `timestamps` and `merge_speakers` shape the reading formats
(TXT, DOCX). Subtitles, RTTM and SegLST keep every utterance with its own timing, and JSON is the
lossless archive, so they ignore both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import PurePath, PureWindowsPath
from typing import BinaryIO, Protocol

from engine.export.clean import one_line
from engine.export.cues import CueLayout
from engine.types import Transcript, Utterance

UNKNOWN_SPEAKER = "unknown"
DEFAULT_STEM = "transcript"


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """How to export. `timestamps`: show times in reading formats; `merge_speakers`: join
    consecutive utterances of one speaker into one paragraph; `cues`: subtitle cue layout."""

    timestamps: bool = True
    merge_speakers: bool = False
    cues: CueLayout = field(default_factory=CueLayout)

    def __post_init__(self) -> None:
        for name in ("timestamps", "merge_speakers"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"ExportOptions.{name} must be True or False")
        if not isinstance(self.cues, CueLayout):
            raise ValueError("ExportOptions.cues must be a CueLayout")


class Exporter(Protocol):
    """One file format, written to a binary stream."""

    @property
    def suffix(self) -> str:
        """The file name ending, with its dot (".srt", ".seglst.json")."""
        ...

    def write(self, transcript: Transcript, stream: BinaryIO, options: ExportOptions) -> None:
        """Write `transcript` in this format to `stream`."""
        ...


def write_lines(stream: BinaryIO, lines: Iterable[str]) -> None:
    """Write text lines as UTF-8 with `\\n` line ends."""
    for line in lines:
        stream.write(line.encode("utf-8"))
        stream.write(b"\n")


def without_folders(transcript: Transcript) -> Transcript:
    """`transcript` whose `source` is the recording's file name only: exports never reveal where
    the user keeps files (folder and user names). Both `/` and `\\` separate folders."""
    if not transcript.source:
        return transcript
    return replace(transcript, source=PureWindowsPath(transcript.source).name)


def session_id(transcript: Transcript) -> str:
    """A one-word name of the recording: the source file's stem, whitespace turned into `_`."""
    stem = PurePath(transcript.source).stem if transcript.source else ""
    return token(stem) or DEFAULT_STEM


def token(text: str) -> str:
    """`text` as one clean, whitespace-free token (RTTM fields), e.g. "Dr. Ann Lee" → "Dr._Ann_Lee"."""
    return re.sub(r"\s+", "_", one_line(text))


def reading_utterances(transcript: Transcript, options: ExportOptions) -> tuple[Utterance, ...]:
    """Utterances as a reading format shows them, merged per speaker if `options` ask for it."""
    if not options.merge_speakers:
        return transcript.utterances
    merged: list[Utterance] = []
    for u in transcript.utterances:
        name = transcript.speaker_name(u.speaker)
        if merged and name is not None and transcript.speaker_name(merged[-1].speaker) == name:
            merged[-1] = _join(merged[-1], u)
        else:
            merged.append(u)
    return tuple(merged)


def _join(first: Utterance, second: Utterance) -> Utterance:
    text = " ".join(t for t in (first.text.strip(), second.text.strip()) if t)
    return Utterance(
        start=min(first.start, second.start),
        end=max(first.end, second.end),
        text=text,
        speaker=first.speaker,
        words=first.words + second.words,
    )
