"""Guards that keep the user's work: a project file changed on disk since this window read it, a
project path that cannot take a save, and an autosave folder that cannot be written (no Qt).

- `DiskStamp.of(path)` is what a file looked like (modification time in ns, size) when this window
  last read or wrote it; `stamp.changed(path)` says whether something else has written it since
  (another window, another program). A file that is gone counts as unchanged: saving recreates it.
- `save_problem(path)` says why a project cannot be saved at `path` (no file name, as `/`; a
  folder there; a file where a folder should be; a folder that cannot be written or looked into),
  or None: the window then asks where to save instead of failing.
- `AutosaveNotice.first(folder, error)` gives the message that crash protection is off the first
  time autosave fails in a session, and None after that: the user is told once, not every 30 s.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class DiskStamp:
    mtime_ns: int
    size: int

    @classmethod
    def of(cls, path: Path) -> DiskStamp | None:
        try:
            info = path.stat()
        except OSError:
            return None
        return cls(info.st_mtime_ns, info.st_size)

    def changed(self, path: Path) -> bool:
        now = DiskStamp.of(path)
        return now is not None and now != self


def save_problem(path: Path) -> str | None:
    """Why a project cannot be written at `path`; None when it can be tried (folders still missing
    are made by the save)."""
    try:
        if not path.name or path.is_dir():
            return f"{path} is a folder"
        existing = next((p for p in path.parents if p.exists()), path.parent)
        if not existing.is_dir():
            return f"{existing} is a file, not a folder"
        if not os.access(existing, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
            return f"{existing if not path.exists() else path} cannot be written"
    except OSError as error:  # a folder on the way that may not be looked into
        return f"{path} cannot be reached ({error.strerror or error})"
    return None


class AutosaveNotice:
    def __init__(self) -> None:
        self._told = False

    def first(self, folder: Path, error: OSError) -> str | None:
        """The message for the first autosave failure of the session (None once told)."""
        if self._told:
            return None
        self._told = True
        reason = error.strerror or str(error)
        return (
            f"Unsaved edits cannot be autosaved to {folder} ({reason}), so crash protection is off "
            "for this session. Save the project (File ▸ Save) to keep your work."
        )
