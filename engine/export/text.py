"""Plain-text transcript (.txt): one block per utterance, separated by blank lines.

A block opens with a header line, `[00:01:02] Alice` (the time is left out when
`options.timestamps` is off, the name when the utterance has no speaker), followed by its text.
With `options.merge_speakers`, consecutive utterances of one speaker form one block. Texts are
cleaned of control characters (`engine.export.clean`); a name stays on its header line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from engine.export.base import ExportOptions, reading_utterances, write_lines
from engine.export.clean import clean_text, one_line
from engine.export.timefmt import clock
from engine.types import Transcript


@dataclass(frozen=True, slots=True)
class TxtExporter:
    suffix: str = ".txt"

    def write(self, transcript: Transcript, stream: BinaryIO, options: ExportOptions) -> None:
        write_lines(stream, _lines(transcript, options))


def _lines(transcript: Transcript, options: ExportOptions) -> Iterator[str]:
    first = True
    for u in reading_utterances(transcript, options):
        text = " ".join(clean_text(u.text).split())
        if not text:
            continue
        if not first:
            yield ""
        first = False
        stamp = f"[{clock(u.start)}]" if options.timestamps else ""
        name = one_line(transcript.speaker_name(u.speaker) or "")
        header = " ".join(part for part in (stamp, name) if part)
        if header:
            yield header
        yield text
