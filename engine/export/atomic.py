"""Atomic file writes: a reader sees the old file or the complete new one, never a half-written one.

`atomic_write(path, write)` hands `write` a binary stream on a fresh temporary file in the same
folder, flushes it to disk, then renames it over `path`. If `write` raises (an error, a cancel,
Ctrl-C), the temporary file is removed and `path` is left exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def atomic_write(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Write `path` through `write(stream)` so it appears complete or not at all."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.part")
    # os.open with mode 0o666 lets the umask decide permissions, like an ordinary new file.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise
