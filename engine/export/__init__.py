"""Transcript exporters: SRT, WebVTT, TXT, JSON, DOCX, RTTM and meeteval SegLST.

`FORMATS` maps a format name to its `Exporter`. `export(transcript, target, formats, options)`
writes one file per format and returns their paths; every file is written atomically, so an error
or a cancel leaves each file either complete or untouched. Where the files go:

- `target` is an existing folder, or a path without a suffix (created as a folder), or any path
  when a `stem` is given: each file is `<folder>/<stem><suffix>`, the stem defaulting to the
  source file's ("transcript" when the transcript has no source);
- otherwise `target` is a file path: with one format it is written exactly there; with several,
  each format replaces a known format suffix of the name (`talk.srt` → `talk.vtt`, `talk.docx`...).

Every exported file names the recording by its file name only, never its folders
(`without_folders`), so a shared file does not reveal the user's disk layout. `render` gives one
format's bytes without touching the disk; `read_json` reads the JSON format back.

The files of one `export` call are written as one set: the folder is locked while they are
written (`folder_lock`), so two runs exporting the same stem into the same folder leave one
run's complete set, never SRT from one and JSON from the other.

A transcript with a time that is not a usable number (NaN, infinite, absurdly large; see
`engine.finite`) is refused with ValueError before anything is written: no format ever says `nan`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterable
from io import BytesIO
from pathlib import Path, PurePath

from engine.errors import Cancelled
from engine.export.atomic import atomic_write, folder_lock
from engine.export.base import DEFAULT_STEM, Exporter, ExportOptions, without_folders
from engine.export.cues import CueLayout
from engine.export.document import DocxExporter
from engine.export.json_format import JsonExporter, read_json
from engine.export.rttm import RttmExporter
from engine.export.seglst import SegLstExporter
from engine.export.subtitles import SrtExporter, VttExporter
from engine.export.text import TxtExporter
from engine.finite import transcript_time_problem
from engine.types import Transcript

__all__ = ["FORMATS", "CueLayout", "ExportOptions", "Exporter", "export", "read_json", "render"]

FORMATS: dict[str, Exporter] = {
    "srt": SrtExporter(),
    "vtt": VttExporter(),
    "txt": TxtExporter(),
    "json": JsonExporter(),
    "docx": DocxExporter(),
    "rttm": RttmExporter(),
    "seglst": SegLstExporter(),
}


def export(
    transcript: Transcript,
    target: str | os.PathLike[str],
    formats: Iterable[str],
    options: ExportOptions | None = None,
    *,
    cancel: threading.Event | None = None,
    stem: str | None = None,
) -> list[Path]:
    """Write `transcript` in each of `formats` (names in `FORMATS`); returns the paths written.

    `cancel`, when set, stops before the next file with `Cancelled`; files already written stay.
    `stem`, when given, names the files and makes `target` a folder whatever its name.
    """
    options = options or ExportOptions()
    names = _check_formats(formats)
    _check_times(transcript)
    paths = output_paths(transcript, Path(target), names, stem)
    transcript = without_folders(transcript)
    folders = sorted({path.parent for path in paths})
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as locks:
        for folder in folders:  # in a fixed order: two exports never wait on each other
            locks.enter_context(folder_lock(folder))
        for name, path in zip(names, paths, strict=True):
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            atomic_write(path, functools.partial(FORMATS[name].write, transcript, options=options))
    return paths


def render(transcript: Transcript, fmt: str, options: ExportOptions | None = None) -> bytes:
    """One format's bytes for exactly `transcript` (its `source` as given: a project file keeps
    the full path; `export` writes `render(without_folders(transcript), ...)`)."""
    _check_times(transcript)
    stream = BytesIO()
    FORMATS[_check_formats([fmt])[0]].write(transcript, stream, options or ExportOptions())
    return stream.getvalue()


def output_paths(
    transcript: Transcript, target: Path, names: list[str], stem: str | None = None
) -> list[Path]:
    """Where `export` writes each of the formats `names` (see the module docstring)."""
    suffixes = [FORMATS[name].suffix for name in names]
    if stem is not None or target.is_dir() or not target.suffix:
        stem = stem or (PurePath(transcript.source).stem if transcript.source else DEFAULT_STEM)
        return [target / f"{stem or DEFAULT_STEM}{suffix}" for suffix in suffixes]
    if len(names) == 1:
        return [target]
    base = target.name
    known = sorted((e.suffix for e in FORMATS.values()), key=len, reverse=True)
    for suffix in known:
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
            break
    return [target.with_name(base + suffix) for suffix in suffixes]


def _check_times(transcript: Transcript) -> None:
    problem = transcript_time_problem(transcript)
    if problem is not None:
        raise ValueError(f"cannot export this transcript: {problem}")


def _check_formats(formats: Iterable[str]) -> list[str]:
    names = list(dict.fromkeys(f.strip().lower() for f in formats))
    unknown = [n for n in names if n not in FORMATS]
    if unknown or not names:
        choices = ", ".join(FORMATS)
        raise ValueError(f"unknown export format {', '.join(unknown) or '(none)'}; choose from {choices}")
    return names
