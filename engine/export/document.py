"""Word document (.docx) of a transcript, written with python-docx.

Layout: a title (the source file's stem), the source file, model and duration, a "Speakers" list
with one line per speaker (name, speaking time, number of utterances), then a "Transcript" section
with one paragraph per utterance: the speaker's name in bold, its start time (unless
`options.timestamps` is off), a line break and the text. `options.merge_speakers` joins
consecutive utterances of one speaker. Characters XML cannot hold and terminal escapes are dropped.
python-docx is imported when a document is written, not with this module: the package's exporters
load with any of them (a project's JSON, the app's autosave), and its import holds the interpreter
for about 0.1 s, which a window sharing it shows as a stall.
"""

from __future__ import annotations

from dataclasses import dataclass
from io import BytesIO
from pathlib import PurePath
from typing import TYPE_CHECKING, BinaryIO

from engine.export.base import DEFAULT_STEM, ExportOptions, reading_utterances
from engine.export.clean import clean_text
from engine.export.timefmt import clock
from engine.types import Transcript, Utterance

if TYPE_CHECKING:
    from docx.document import Document

_TIME_GREY = 0x80  # the start time's colour, in each of red, green and blue


@dataclass(frozen=True, slots=True)
class DocxExporter:
    suffix: str = ".docx"

    def write(self, transcript: Transcript, stream: BinaryIO, options: ExportOptions) -> None:
        import docx

        document = docx.Document()
        _front_matter(document, transcript)
        document.add_heading("Transcript", level=1)
        for u in reading_utterances(transcript, options):
            if u.text.strip():
                _add_utterance(document, transcript.speaker_name(u.speaker), u, options)
        buffer = BytesIO()  # built in memory: a full disk fails on one plain write, not inside the zip
        document.save(buffer)
        stream.write(buffer.getbuffer())


def speaking_time(transcript: Transcript) -> list[tuple[str, float, int]]:
    """(display name, seconds spoken, utterance count) per named speaker, in the speaker list's order."""
    rank: dict[str, int] = {}
    for i, s in enumerate(transcript.speakers):
        rank.setdefault(s.name, i)
    totals: dict[str, tuple[float, int]] = {}
    for u in transcript.utterances:
        name = transcript.speaker_name(u.speaker)
        if name:
            seconds, count = totals.get(name, (0.0, 0))
            totals[name] = (seconds + max(u.duration, 0.0), count + 1)
    rows = [(name, seconds, count) for name, (seconds, count) in totals.items()]
    return sorted(rows, key=lambda row: rank.get(row[0], len(rank)))


def _front_matter(document: Document, transcript: Transcript) -> None:
    title = _clean(PurePath(transcript.source).stem if transcript.source else "") or DEFAULT_STEM.title()
    document.core_properties.title = title
    document.core_properties.language = transcript.language
    document.add_heading(title, level=0)
    facts = [("Source", transcript.source), ("Model", transcript.model)]
    for label, value in [*facts, ("Duration", clock(transcript.duration))]:
        if value:
            document.add_paragraph(f"{label}: {_clean(value)}")
    speakers = speaking_time(transcript)
    if speakers:
        document.add_heading("Speakers", level=1)
    for name, seconds, count in speakers:
        plural = "" if count == 1 else "s"
        line = f"{_clean(name)} — {clock(seconds)} in {count} utterance{plural}"
        document.add_paragraph(line, style="List Bullet")


def _add_utterance(document: Document, name: str | None, u: Utterance, options: ExportOptions) -> None:
    from docx.shared import RGBColor

    paragraph = document.add_paragraph()
    head = []
    if name:
        head.append(paragraph.add_run(_clean(name)))
        head[-1].bold = True
    if options.timestamps:
        head.append(paragraph.add_run(f"  {clock(u.start)}" if name else clock(u.start)))
        head[-1].font.color.rgb = RGBColor(_TIME_GREY, _TIME_GREY, _TIME_GREY)
    if head:
        head[-1].add_break()
    paragraph.add_run(_clean(" ".join(u.text.split())))


def _clean(text: str) -> str:
    return clean_text(text)
