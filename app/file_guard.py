"""Two guards that keep the user's work: a project file changed on disk since this window read it,
and an autosave folder that cannot be written (no Qt).

- `DiskStamp.of(path)` is what a file looked like (modification time in ns, size) when this window
  last read or wrote it; `stamp.changed(path)` says whether something else has written it since
  (another window, another program). A file that is gone counts as unchanged: saving recreates it.
- `AutosaveNotice.first(folder, error)` gives the message that crash protection is off the first
  time autosave fails in a session, and None after that: the user is told once, not every 30 s.
"""

from __future__ import annotations

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
