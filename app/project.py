"""Project files (`.murmur`): a transcript with its speakers, settings and a link to the audio.

A project is one JSON object, portable between machines:
`{"format": "murmur-project", "version": 1, "audio": {"path", "relative", "size", "duration", "stream"},
"transcript": <Murmur transcript JSON or null>, "speakers": [{"id", "name", "color"}],
"settings": {...}, "speech": [[start, end], ...], "chunks": [[start, end], ...]}`.
The audio is referenced by absolute path and by path relative to the project file; `resolve_audio`
tries the relative path first (a project moved together with its audio), then the absolute one,
then a file of the same name beside the project. Files are written atomically, in small pieces
(`app.project_json`: one line of speech per line of text, so a background save never holds the
interpreter long).

Autosaves and their recovery: `app.project_recovery`.

A file is read as UTF-8 with or without a byte-order mark; bytes that are not UTF-8 raise
`ProjectTextError` naming line, column and byte offset (`app.project_text`) and carrying the
project as read with them replaced, so the caller can offer it; JSON that does not parse is named
by line and column. A project is validated completely before any of it is used: a wrongly typed field anywhere
(settings included), JSON nested too deep to read, a file over `MAX_PROJECT_BYTES` or a
transcript over `MAX_UTTERANCES` lines raise `ProjectError` with a message naming the file and
the field or the limit, and so do times that are NaN, infinite or absurdly large
(`engine.finite`), so no view ever sees one. A speaker colour that is not `#RRGGBB` falls back
to a palette colour no other speaker uses.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app import project_text
from app.project_fields import audio_fields, pair, settings_from, speakers_from, typed
from app.project_json import write_json
from app.speakers import SpeakerBook
from engine.errors import MurmurError, TranscriptFormatError
from engine.finite import time_problem
from engine.types import Chunk, SpeechSegment, Transcript

FORMAT = "murmur-project"
VERSION = 1
SUFFIX = ".murmur"
MAX_PROJECT_BYTES = 512 * 2**20  # a 24-hour transcript with word times takes well under 100 MB
MAX_UTTERANCES = 100_000  # far above a day of speech; more would leave the window unusable


class ProjectError(MurmurError):
    """A project file could not be read."""


class ProjectTextError(ProjectError):
    """A project file holds bytes that are not UTF-8; `salvage` is the project read without them."""

    def __init__(self, message: str, salvage: Project) -> None:
        super().__init__(message)
        self.salvage = salvage


@dataclass(frozen=True, slots=True)
class AudioRef:
    path: str  # absolute, as saved
    relative: str | None = None  # relative to the project's folder, when one exists
    size: int | None = None
    duration: float = 0.0
    stream: int | None = None  # which audio stream of the file was opened; None: its default one


@dataclass(frozen=True, slots=True)
class Project:
    audio: AudioRef | None = None
    transcript: Transcript | None = None
    speakers: SpeakerBook = ()
    settings: dict[str, Any] = field(default_factory=dict)
    speech: tuple[SpeechSegment, ...] = ()
    chunks: tuple[Chunk, ...] = ()


def audio_ref(audio: Path, project_path: Path | None, duration: float, stream: int | None = None) -> AudioRef:
    """How a project saved at `project_path` refers to `audio`."""
    audio = audio.resolve()
    relative = None
    if project_path is not None:
        try:
            relative = Path(os.path.relpath(audio, project_path.resolve().parent)).as_posix()
        except ValueError:  # another drive on Windows
            relative = None
    size = audio.stat().st_size if audio.exists() else None
    return AudioRef(str(audio), relative, size, duration, stream)


def resolve_audio(project_path: Path, ref: AudioRef) -> Path | None:
    """The audio file a project refers to, wherever it can still be found; None if nowhere."""
    folder = project_path.resolve().parent
    candidates = [folder / ref.relative] if ref.relative else []
    candidates += [Path(ref.path), folder / Path(ref.path).name]
    return next((c.resolve() for c in candidates if c.is_file()), None)


def to_dict(project: Project, project_path: Path | None) -> dict[str, Any]:
    """The project as JSON data; its long lists are iterators, each item built when it is written
    (`app.project_json`), so a save never holds the whole transcript twice."""
    from engine.export.json_format import transcript_dict

    audio = project.audio
    if audio is not None and project_path is not None and Path(audio.path).is_file():
        audio = audio_ref(Path(audio.path), project_path, audio.duration, audio.stream)
    # a recording that is not where the link says keeps the link as it was: it may come back
    transcript = project.transcript
    return {
        "format": FORMAT,
        "version": VERSION,
        "audio": None if audio is None else {
            "path": audio.path, "relative": audio.relative, "size": audio.size, "duration": audio.duration,
            "stream": audio.stream,
        },
        "transcript": None if transcript is None else transcript_dict(transcript, lazy=True),
        "speakers": [{"id": s.id, "name": s.name, "color": s.color} for s in project.speakers],
        "settings": project.settings,
        "speech": ([s.start, s.end] for s in project.speech),
        "chunks": ([c.start, c.end] for c in project.chunks),
    }  # fmt: skip


def from_dict(data: Any) -> Project:
    """The project in parsed JSON, validated completely; ValueError/TypeError names the first bad field."""
    from engine.export.json_format import transcript_from_dict

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError("it is not a Murmur project")
    if data.get("version") != VERSION:
        raise ValueError(f"it has format version {data.get('version')!r}; this Murmur reads {VERSION}")
    transcript, audio = data.get("transcript"), audio_fields(data.get("audio"))
    if isinstance(transcript, dict) and len(typed(transcript, "utterances", list, [])) > MAX_UTTERANCES:
        count = len(transcript["utterances"])
        raise ValueError(f"it holds {count:,} lines; Murmur opens projects of at most {MAX_UTTERANCES:,}")
    return Project(
        audio=None if audio is None else AudioRef(*audio),
        transcript=None if transcript is None else transcript_from_dict(transcript),
        speakers=speakers_from(typed(data, "speakers", list)),
        settings=settings_from(data.get("settings")),
        speech=tuple(
            SpeechSegment(*pair(p, f"speech[{i}]")) for i, p in enumerate(typed(data, "speech", list, []))
        ),
        chunks=tuple(
            Chunk(i, *pair(p, f"chunks[{i}]")) for i, p in enumerate(typed(data, "chunks", list, []))
        ),
    )


def check_project_times(project: Project) -> None:
    """ValueError naming the first time in `project` that is not a usable number (`engine.finite`)."""
    times = [("audio.duration", project.audio.duration)] if project.audio else []
    times += [(f"speech[{i}]", t) for i, s in enumerate(project.speech) for t in (s.start, s.end)]
    times += [(f"chunks[{i}]", t) for i, c in enumerate(project.chunks) for t in (c.start, c.end)]
    for where, value in times:
        problem = time_problem(value)
        if problem is not None:
            raise ValueError(f"{where} {problem}")


def save_project(project: Project, path: Path) -> None:
    """Write `project` to `path` atomically (relative audio path computed for `path`)."""
    write_json_file(path, to_dict(project, path))


def load_project(path: Path) -> Project:
    return read_project(path)[1]


def write_json_file(path: Path, data: dict[str, Any]) -> None:
    from engine.export.atomic import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda stream: write_json(stream, data))


def read_project(path: Path) -> tuple[dict[str, Any], Project]:
    """The file's JSON and the project it holds (parsed once). Bytes that are not UTF-8 raise
    `ProjectTextError`, naming where they are and carrying the project read without them."""
    try:
        size = path.stat().st_size
        if size > MAX_PROJECT_BYTES:
            raise ProjectError(
                f"{path.name} is {size / 2**20:,.0f} MB; Murmur opens projects of at most "
                f"{MAX_PROJECT_BYTES // 2**20} MB"
            )
        decoded = project_text.decode(path.read_bytes())
    except OSError as exc:
        raise ProjectError(f"cannot read {path}: {exc.strerror or exc}") from exc
    damage = f"{path.name} has {project_text.describe(decoded)}" if decoded.bad else ""
    try:
        data, project = _parse(path, decoded.text)
    except ProjectError as exc:
        raise ProjectError(f"{damage}; {exc}" if damage else str(exc)) from exc
    if damage:
        raise ProjectTextError(damage, project)
    return data, project


def _parse(path: Path, text: str) -> tuple[dict[str, Any], Project]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = project_text.json_position(exc)
        raise ProjectError(f"{path.name} is not a Murmur project: it is not valid JSON ({where})") from exc
    except RecursionError as exc:
        raise ProjectError(f"{path.name} is not a Murmur project: its JSON is nested too deep") from exc
    try:
        project = from_dict(data)
        check_project_times(project)
        return data, project
    except OverflowError as exc:
        raise ProjectError(f"{path.name} is not a valid Murmur project: a time is out of range") from exc
    except (ValueError, KeyError, TypeError, TranscriptFormatError) as exc:
        raise ProjectError(f"{path.name} is not a valid Murmur project: {exc}") from exc
