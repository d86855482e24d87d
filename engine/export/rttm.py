"""RTTM speaker turns (.rttm): one SPEAKER line per utterance, as diarization scorers read them.

`SPEAKER <uri> 1 <start> <duration> <NA> <NA> <speaker> <NA> <NA>`, times in seconds with three
decimals. The uri is the source file's stem; the speaker is the display name with whitespace turned
into `_` ("unknown" without a speaker). Utterances that last no time are left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from engine.export.base import UNKNOWN_SPEAKER, ExportOptions, session_id, token, write_lines
from engine.types import Transcript


@dataclass(frozen=True, slots=True)
class RttmExporter:
    suffix: str = ".rttm"

    def write(self, transcript: Transcript, stream: BinaryIO, options: ExportOptions) -> None:
        write_lines(stream, _lines(transcript))


def _lines(transcript: Transcript) -> Iterator[str]:
    uri = session_id(transcript)
    for u in transcript.utterances:
        if u.duration <= 0:
            continue
        speaker = token(transcript.speaker_name(u.speaker) or "") or UNKNOWN_SPEAKER
        yield f"SPEAKER {uri} 1 {u.start:.3f} {u.duration:.3f} <NA> <NA> {speaker} <NA> <NA>"
