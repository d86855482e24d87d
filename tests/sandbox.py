"""A test session's own home and temp folder, and what the session left outside them.

`Sandbox.start()` makes one folder for the session and points at it everything that writes
beside the user's files: `HOME` and the XDG folders (Qt's dialog state, PulseAudio's cookie and
runtime links, matplotlib's font cache, onnxruntime's device id, Ray's auth token), `TMPDIR`
(pytest's own `tmp_path` folders too), `RAY_TMPDIR`, `TRITON_CACHE_DIR`, `MPLCONFIGDIR`,
`TORCHINDUCTOR_CACHE_DIR`; the model caches (`HF_HOME`, `TORCH_HOME`) stay where they were. It
notes what the real home and temp folder held. `left_behind()` lists what is new there since, and
what tests left in the session's temp folder (a test's own `tmp_path` aside); `close()` removes
the session's folder and puts the environment back. Subprocesses inherit the environment, so they
are covered too.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

PREFIX = "murmur-tests-"  # a session's sandbox (this one, or another session's running alongside)
PYTEST_TEMP = "pytest-of-"  # pytest's own tmp_path folders, removed with the session's folder
# written into the temp folder whatever the settings: onnxruntime's session stamp at import, and torch
# Inductor's header and autotune caches (`default_cache_dir`, which ignores TORCHINDUCTOR_CACHE_DIR)
LIBRARY_TEMP = (".ses", "torchinductor_")  # name prefixes
HOME_DEPTH = 2  # ~/.cache/x is a new entry; what is inside an entry that existed is not listed


def entries(folder: Path, depth: int) -> set[Path]:
    """Paths under `folder` up to `depth` levels down (not following links)."""
    found: set[Path] = set()
    level = [folder]
    for _ in range(depth):
        following = []
        for parent in level:
            try:
                children = list(parent.iterdir())
            except OSError:
                continue
            found.update(children)
            following += [c for c in children if c.is_dir() and not c.is_symlink()]
        level = following
    return found


@dataclass(frozen=True)
class Sandbox:
    root: Path
    home: Path  # the user's real home
    temp: Path  # the real temp folder
    home_before: frozenset[Path]
    temp_before: frozenset[Path]
    environ_before: tuple[tuple[str, str | None], ...]  # what `start` replaced, put back by `close`

    @classmethod
    def start(cls) -> Sandbox:
        home, temp = Path.home(), Path(tempfile.gettempdir())
        home_before, temp_before = frozenset(entries(home, HOME_DEPTH)), frozenset(entries(temp, 1))
        root = Path(tempfile.mkdtemp(prefix=PREFIX))
        folders = {
            "HOME": "home", "XDG_CONFIG_HOME": "home/.config", "XDG_CACHE_HOME": "home/.cache",
            "XDG_DATA_HOME": "home/.local/share", "XDG_STATE_HOME": "home/.local/state",
            "XDG_RUNTIME_DIR": "run", "TMPDIR": "tmp", "RAY_TMPDIR": "ray", "TRITON_CACHE_DIR": "triton",
            "MPLCONFIGDIR": "home/.config/matplotlib", "TORCHINDUCTOR_CACHE_DIR": "torchinductor",
        }  # fmt: skip
        cache = Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")
        caches = {"HF_HOME": cache / "huggingface", "TORCH_HOME": cache / "torch"}
        environ_before = tuple((name, os.environ.get(name)) for name in [*folders, *caches])
        for name, real in caches.items():  # model caches stay the user's: tests read them, offline
            os.environ.setdefault(name, str(real))
        for name, sub in folders.items():
            (root / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
            os.environ[name] = str(root / sub)
        tempfile.tempdir = None  # gettempdir() reads TMPDIR again
        return cls(root, home, temp, home_before, temp_before, environ_before)

    def left_behind(self) -> list[str]:
        """What the session left: new in the real home or temp folder, and in its own temp folder."""
        new_home = entries(self.home, HOME_DEPTH) - self.home_before
        new_temp = {p for p in entries(self.temp, 1) - self.temp_before if not p.name.startswith(PREFIX)}
        own_temp = {
            p
            for p in entries(self.root / "tmp", 1)
            if not p.name.startswith((PYTEST_TEMP, *LIBRARY_TEMP))
        }
        new = new_home | new_temp | own_temp
        return sorted(str(p) for p in new if p.parent not in new)  # a new folder, not all it holds

    def close(self) -> None:
        """Remove the session's folder and put the environment back (a process may run pytest
        again, as mutmut does)."""
        for name, value in self.environ_before:
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        tempfile.tempdir = None
        shutil.rmtree(self.root, ignore_errors=True)
