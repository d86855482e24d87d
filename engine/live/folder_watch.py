"""A watch folder: every new recording dropped into it is transcribed once, when completely written.

Contract of `FolderWatcher(folder, state_file)`:
- `poll(now)` scans the folder (not its subfolders; hidden files, files still being recorded by
  Murmur — they have a `.recording.json` marker — and non-audio names are ignored) and returns the
  files that are *ready*: non-empty, size and modification time unchanged for `settle_seconds`,
  and not already handled in this state. A file written slowly in pieces is ready only once the
  writing has stopped for `settle_seconds`.
- `done(path, outputs)` / `failed(path, reason)` record the outcome in the state file (JSON,
  replaced atomically), keyed by file name with its size and modification time, so a restart
  never transcribes a file twice nor retries a broken one; a file replaced by a different one
  (other size or time) is new again.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from engine.live.flac_writer import MARKER_SUFFIX

STATE_NAME = ".murmur-watch.json"
SETTLE_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class _Seen:
    size: int
    mtime: float
    since: float  # when this size and time were first seen


class FolderWatcher:
    def __init__(self, folder: Path, state_file: Path, settle_seconds: float = SETTLE_SECONDS) -> None:
        from engine.audio.io import SUPPORTED_EXTENSIONS

        if settle_seconds < 0:
            raise ValueError(f"settle time must be non-negative, got {settle_seconds}")
        if not folder.is_dir():
            raise ValueError(f"the watch folder {folder} does not exist")
        self.folder = folder
        self.state_file = state_file
        self.settle_seconds = settle_seconds
        self.extensions = frozenset(SUPPORTED_EXTENSIONS)
        self.state = _load(state_file)
        self._seen: dict[str, _Seen] = {}

    def poll(self, now: float | None = None) -> list[Path]:
        now = time.monotonic() if now is None else now
        ready = []
        for path in sorted(self.folder.iterdir()):
            if not self._candidate(path):
                continue
            try:
                st = path.stat()
            except OSError:
                continue  # removed while we looked
            key = path.name
            seen = self._seen.get(key)
            if seen is None or (seen.size, seen.mtime) != (st.st_size, st.st_mtime):
                self._seen[key] = _Seen(st.st_size, st.st_mtime, now)
                continue
            if st.st_size and now - seen.since >= self.settle_seconds and not self._handled(key, st):
                ready.append(path)
        return ready

    def done(self, path: Path, outputs: list[Path]) -> None:
        self._record(path, "done", [str(p) for p in outputs])

    def failed(self, path: Path, reason: str) -> None:
        self._record(path, "failed", reason)

    def _candidate(self, path: Path) -> bool:
        return (
            path.is_file()
            and not path.name.startswith(".")
            and path.suffix.lower() in self.extensions
            and not path.with_name(path.name + MARKER_SUFFIX).exists()
        )

    def _handled(self, key: str, st: os.stat_result) -> bool:
        entry = self.state.get(key)
        return entry is not None and (entry["size"], entry["mtime"]) == (st.st_size, st.st_mtime)

    def _record(self, path: Path, outcome: str, detail: object) -> None:
        st = path.stat()
        self.state[path.name] = {"size": st.st_size, "mtime": st.st_mtime, "outcome": outcome,
                                 "detail": detail}  # fmt: skip
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_name(self.state_file.name + ".part")
        tmp.write_text(json.dumps(self.state, indent=1))
        os.replace(tmp, self.state_file)


def _load(path: Path) -> dict[str, dict]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"the watch state {path} cannot be read ({exc}); move it away to start again") \
            from exc
    return data if isinstance(data, dict) else {}
