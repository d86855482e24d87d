"""Autosave files and their recovery after a crash.

`RecoveryStore(folder)` keeps one autosave file per running session (the project plus the saving
process id and the project's own path). A file left behind by a process that is no longer running
means edits were not saved: `pending()` lists those, newest first, so they can be restored one by
one. Recovery metadata (pid, saved_at) is cosmetic: a pid that no process can have means the
session is gone, and a saved_at that is not a plausible time is replaced by the file's own time,
so the edits are always offered. An ended session's file that cannot be restored (damaged, from a
newer Murmur) is moved by `set_aside()` into `folder/unreadable/`: reported once, and kept.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.project import Project, ProjectError, read_project, to_dict, write_json_file

RECOVERY_SUFFIX = ".murmur-recovery"
UNREADABLE = "unreadable"  # the recovery folder's subfolder for autosaves that cannot be restored
_MAX_PID = 2**22  # above any process id a system hands out


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
        write_json_file(self.path, data)

    def discard(self) -> None:
        with contextlib.suppress(OSError):  # a folder that cannot be written holds no autosave
            self.path.unlink(missing_ok=True)

    def set_aside(self) -> list[tuple[Path, str]]:
        """Autosaves of ended sessions that cannot be restored (damaged, or from a newer Murmur),
        moved into `folder/unreadable/` so they are reported once rather than skipped at every
        start, and kept for a later Murmur or by hand: (where each is now, why it was refused)."""
        moved = []
        for path in sorted(self.folder.glob(f"*{RECOVERY_SUFFIX}")):
            try:
                read_project(path)
                continue
            except ProjectError as exc:
                reason = str(exc)
            if path == self.path or _process_alive(_written_by(path)):
                continue
            target = self.folder / UNREADABLE / path.name
            try:
                target.parent.mkdir(exist_ok=True)
                path.replace(target)
            except OSError:
                continue  # left where it is: it is still on disk, and reported again next time
            moved.append((target, reason))
        return moved

    def pending(self) -> list[Recovery]:
        """Autosaves of sessions that are no longer running, newest first (unreadable ones skipped)."""
        found = []
        for path in sorted(self.folder.glob(f"*{RECOVERY_SUFFIX}")):
            try:
                data, project = read_project(path)
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


def _written_by(path: Path) -> int | None:
    """The process id a recovery file that cannot be read names, if it can be found in it."""
    try:
        found = re.search(rb'"pid"\s*:\s*(\d{1,9})\b', path.read_bytes()[-4096:])
    except OSError:
        return None
    return int(found.group(1)) if found else None


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
