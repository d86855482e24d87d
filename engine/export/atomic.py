"""Atomic file writes: a reader sees the old file or the complete new one, never a half-written one.

`atomic_write(path, write)` hands `write` a binary stream on a fresh temporary file in the same
folder (`.<name>.<pid>-<random>.part`), flushes it to disk, then renames it over `path`. If `write`
raises (an error, a cancel, Ctrl-C), the temporary file is removed and `path` is left exactly as
it was. A process killed mid-write cannot remove its temporary file: the next write to that folder
removes every `.part` file whose writing process is no longer running (`remove_stale_parts`).

`folder_lock(folder)` holds an exclusive lock on a folder (flock on the folder itself, so no
lock file is left behind; a no-op where flock does not exist): two processes exporting into one
folder write their sets one after the other, never interleaved.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

_PART = re.compile(r"^\..+\.(\d+)-[0-9a-f]{8}\.part$")


def atomic_write(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Write `path` through `write(stream)` so it appears complete or not at all."""
    remove_stale_parts(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.part")
    # "x": created here or not at all (never another writer's file); the umask decides permissions
    # and Windows opens it binary, as for any file `open` creates. Opened before the `try`, so a name
    # that already exists is never removed below.
    opened = open(temporary, "xb")  # noqa: SIM115 - the `with` is inside the `try`
    try:
        with opened as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Exclusive lock on `folder` while the block runs (see the module docstring)."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def remove_stale_parts(folder: Path) -> list[Path]:
    """Delete temporary files left in `folder` by writers that died; returns what was removed."""
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            match = _PART.match(entry.name)
            if match and not _alive(int(match.group(1))):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid() or sys.platform == "win32":  # os.kill would end the process there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True
