"""What a watch folder has handled: the state file of `murmur watch`, and the lock that makes one
watcher per folder.

Contract:
- `Stamp(size, mtime)` identifies one version of a file; it is read *before* the file is
  transcribed, so a file replaced while it was being transcribed has another stamp and is new.
- `load_state(path)` reads the JSON state ({name: {"size", "mtime", "outcome", "detail", "stem"}});
  a missing file is an empty state; one that cannot be read raises `ValueError` saying how to start
  again. `save_state(path, state)` writes it through a temporary file and `os.replace`, so a full
  disk or a kill leaves the previous state whole; it raises `OSError` (the temporary file is
  removed) and the caller decides what to say.
- `FolderLock(folder, fallback)` takes an exclusive `flock` on `folder/.murmur-watch.lock` (on
  `fallback/…` when `folder` is read-only) for the watcher's life; a second watcher of the same
  folder gets `ValueError` naming the folder. The lock is released by `release()` or when the
  process ends, however it ends (the kernel drops it).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

LOCK_NAME = ".murmur-watch.lock"


@dataclass(frozen=True, slots=True)
class Stamp:
    size: int
    mtime: float

    @classmethod
    def of(cls, path: Path) -> Stamp:
        st = path.stat()
        return cls(st.st_size, st.st_mtime)


def load_state(path: Path) -> dict[str, dict]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"the watch state {path} cannot be read ({exc}); move it away to start again") \
            from exc
    return data if isinstance(data, dict) else {}


def save_state(path: Path, state: dict[str, dict]) -> None:
    tmp = path.with_name(path.name + ".part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("w") as f:
            f.write(json.dumps(state, indent=1))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise


class FolderLock:
    def __init__(self, folder: Path, fallback: Path) -> None:
        import fcntl

        self.path = self._open(folder, fallback)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise ValueError(f"{folder} is already watched by another `murmur watch` (lock {self.path}); "
                             "one watcher per folder") from None  # fmt: skip

    def _open(self, folder: Path, fallback: Path) -> Path:
        for where in (folder, fallback):
            path = where / LOCK_NAME
            try:
                where.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
                return path
            except OSError as exc:
                error = exc
        raise ValueError(f"cannot lock {folder} for watching: {error.strerror or error}")

    def release(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)
