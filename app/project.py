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

Recovery: `RecoveryStore(folder)` keeps one autosave file per running session (the project plus
the saving process id and the project's own path). A file left behind by a process that is no
longer running means edits were not saved: `pending()` lists those so they can be restored.
Recovery metadata (pid, saved_at) is cosmetic: a pid that no process can have means the session
is gone, and a saved_at that is not a plausible time is replaced by the file's own time, so the
edits are always offered.

A project is validated completely before any of it is used: a wrongly typed field anywhere
(settings included), JSON nested too deep to read, a file over `MAX_PROJECT_BYTES` or a
transcript over `MAX_UTTERANCES` lines raise `ProjectError` with a message naming the file and
the field or the limit, and so do times that are NaN, infinite or absurdly large
(`engine.finite`), so no view ever sees one. A speaker colour that is not `#RRGGBB` falls back
to a palette colour no other speaker uses.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.project_fields import audio_fields, pair, settings_from, speakers_from, typed
from app.project_json import write_json
from app.speakers import SpeakerBook
from engine.errors import MurmurError, TranscriptFormatError
from engine.finite import time_problem
from engine.types import Chunk, SpeechSegment, Transcript

FORMAT = "murmur-project"
VERSION = 1
SUFFIX = ".murmur"
RECOVERY_SUFFIX = ".murmur-recovery"
MAX_PROJECT_BYTES = 512 * 2**20  # a 24-hour transcript with word times takes well under 100 MB
MAX_UTTERANCES = 100_000  # far above a day of speech; more would leave the window unusable
_MAX_PID = 2**22  # above any process id a system hands out


class ProjectError(MurmurError):
    """A project file could not be read."""


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
    if audio is not None and project_path is not None:
        audio = audio_ref(Path(audio.path), project_path, audio.duration, audio.stream)
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
    _write_json(path, to_dict(project, path))


def load_project(path: Path) -> Project:
    return _read_project(path)[1]


def _write_json(path: Path, data: dict[str, Any]) -> None:
    from engine.export.atomic import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda stream: write_json(stream, data))


def _read_project(path: Path) -> tuple[dict[str, Any], Project]:
    """The file's JSON and the project it holds (parsed once)."""
    try:
        size = path.stat().st_size
        if size > MAX_PROJECT_BYTES:
            raise ProjectError(
                f"{path.name} is {size / 2**20:,.0f} MB; Murmur opens projects of at most "
                f"{MAX_PROJECT_BYTES // 2**20} MB"
            )
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProjectError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProjectError(f"{path.name} is not a Murmur project: it is not valid JSON") from exc
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


@dataclass(frozen=True, slots=True)
class Recovery:
    """An autosave left behind by a session that ended without saving."""

    path: Path
    saved_at: float  # seconds since the epoch
    project_path: Path | None  # where the project was saved before, if it ever was
    project: Project


class RecoveryStore:
    """Autosave files of live sessions in `folder`; each session writes only its own file."""

    def __init__(self, folder: Path, pid: int | None = None) -> None:
        self.folder = folder
        self.pid = os.getpid() if pid is None else pid
        self.path = folder / f"session-{self.pid}-{int(time.time() * 1000)}{RECOVERY_SUFFIX}"

    def write(self, project: Project, project_path: Path | None) -> None:
        data = to_dict(project, None)
        data["recovery"] = {
            "pid": self.pid,
            "saved_at": time.time(),
            "project_path": None if project_path is None else str(project_path),
        }
        _write_json(self.path, data)

    def discard(self) -> None:
        with contextlib.suppress(OSError):  # a folder that cannot be written holds no autosave
            self.path.unlink(missing_ok=True)

    def pending(self) -> list[Recovery]:
        """Autosaves of sessions that are no longer running, newest first (unreadable ones skipped)."""
        found = []
        for path in sorted(self.folder.glob(f"*{RECOVERY_SUFFIX}")):
            try:
                data, project = _read_project(path)
            except ProjectError:
                continue
            meta = data.get("recovery") if isinstance(data.get("recovery"), dict) else {}
            if path == self.path or _process_alive(meta.get("pid")):
                continue
            where = meta.get("project_path")
            found.append(Recovery(path, _saved_at(meta.get("saved_at"), path), _path_or_none(where), project))
        return sorted(found, key=lambda r: r.saved_at, reverse=True)


def _saved_at(value: Any, path: Path) -> float:
    """When a recovery file was saved: its own record if plausible, else the file's time."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if ok and 0 < value <= time.time() + 86_400:
        return float(value)
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _path_or_none(value: Any) -> Path | None:
    return Path(value) if isinstance(value, str) and value else None


def _process_alive(pid: Any) -> bool:
    """Whether the process that wrote a recovery file still runs (an impossible pid: it does not)."""
    if isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid < _MAX_PID:
        return False
    if pid == os.getpid():
        return True
    if sys.platform == "win32":  # os.kill would terminate the process there
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True
