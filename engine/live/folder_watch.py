"""A watch folder: every new recording dropped into it is transcribed once, when completely written.

Contract of `FolderWatcher(folder, state_file)`:
- `poll(now)` scans the folder (not its subfolders; hidden files, files still being recorded by
  Murmur — they have a `.recording.json` marker — and non-audio names are ignored) and returns the
  files that are *ready*, each with the `Stamp` (size, mtime) read before it is handed out:
  non-empty, unchanged for `settle_seconds`, not already handled at that stamp, and whole
  (`engine.live.whole_file.unfinished`: a copy that paused half-way is not). A file that stopped
  changing but is not whole is named once through `on_note` and waits until it changes. A folder
  that cannot be read (removed, unmounted) is named once and scanned again at the next poll.
- `stem_for(name)` is the file stem of that file's transcripts: its own stem, unless another file
  of the folder already has it (`meeting.wav`, then `meeting.mp3` → `meeting-2`): transcripts
  never overwrite another file's. The choice is kept in the state.
- `done(ready, outputs)` / `failed(ready, reason)` record the outcome under the file's name with
  the stamp it was handed out with (`engine.live.watch_state`), so a restart never transcribes a
  file twice nor retries a broken one, and a file replaced in the meantime is new again. The state
  is kept in memory first; saving it may raise `OSError` (the caller says so once and goes on).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.live.flac_writer import MARKER_SUFFIX
from engine.live.watch_state import Stamp, load_state, save_state
from engine.live.whole_file import unfinished

STATE_NAME = ".murmur-watch.json"
SETTLE_SECONDS = 2.0
NoteFn = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Ready:
    path: Path
    stamp: Stamp  # read before the file was handed out


@dataclass(frozen=True, slots=True)
class _Seen:
    stamp: Stamp
    since: float  # when this stamp was first seen
    waiting: bool = False  # stable, checked, and not whole: wait for a change


class FolderWatcher:
    def __init__(self, folder: Path, state_file: Path, settle_seconds: float = SETTLE_SECONDS,
                 on_note: NoteFn | None = None) -> None:  # fmt: skip
        from engine.audio.io import SUPPORTED_EXTENSIONS

        if not settle_seconds >= 0:
            raise ValueError(f"settle time must be a non-negative number of seconds, got {settle_seconds}")
        if not folder.is_dir():
            raise ValueError(f"the watch folder {folder} does not exist")
        self.folder = folder
        self.state_file = state_file
        self.settle_seconds = settle_seconds
        self.on_note = on_note or (lambda text: None)
        self.extensions = frozenset(SUPPORTED_EXTENSIONS)
        self.state = load_state(state_file)
        self._seen: dict[str, _Seen] = {}
        self._stems = {name: str(e.get("stem", Path(name).stem)) for name, e in self.state.items()
                       if e.get("outcome") == "done"}  # fmt: skip
        self._folder_gone = False

    def poll(self, now: float | None = None) -> list[Ready]:
        now = time.monotonic() if now is None else now
        ready = []
        for path in self._scan():
            try:
                stamp = Stamp.of(path)
            except OSError:
                continue  # removed while we looked
            seen = self._seen.get(path.name)
            if seen is None or seen.stamp != stamp:
                self._seen[path.name] = _Seen(stamp, now)
            elif self._settled(path.name, stamp, seen, now) and self._whole(path, stamp, seen):
                ready.append(Ready(path, stamp))
        return ready

    def stem_for(self, name: str) -> str:
        if name not in self._stems:
            taken = {s.casefold() for s in self._stems.values()}
            stem, n = Path(name).stem, 1
            while (stem if n == 1 else f"{stem}-{n}").casefold() in taken:
                n += 1
            self._stems[name] = stem if n == 1 else f"{stem}-{n}"
        return self._stems[name]

    def done(self, ready: Ready, outputs: list[Path]) -> None:
        self._record(ready, "done", [str(p) for p in outputs])

    def failed(self, ready: Ready, reason: str) -> None:
        self._record(ready, "failed", reason)

    def _scan(self) -> list[Path]:
        try:
            paths = sorted(p for p in self.folder.iterdir() if self._candidate(p))
        except OSError as exc:
            if not self._folder_gone:
                self.on_note(f"cannot read the watch folder {self.folder} ({exc.strerror or exc}); "
                             "waiting for it to come back")  # fmt: skip
            self._folder_gone = True
            return []
        if self._folder_gone:
            self.on_note(f"the watch folder {self.folder} is back")
        self._folder_gone = False
        return paths

    def _candidate(self, path: Path) -> bool:
        return (
            not path.name.startswith(".")
            and path.suffix.lower() in self.extensions
            and not path.with_name(path.name + MARKER_SUFFIX).exists()
            and path.is_file()
        )

    def _settled(self, name: str, stamp: Stamp, seen: _Seen, now: float) -> bool:
        """Non-empty, unchanged for the settle time, not handled at this stamp, not known unwhole."""
        return (stamp.size > 0 and now - seen.since >= self.settle_seconds and not seen.waiting
                and not self._handled(name, stamp))  # fmt: skip

    def _whole(self, path: Path, stamp: Stamp, seen: _Seen) -> bool:
        """Decoded to its end (once per stamp); a file that is not is named once and waits."""
        try:
            reason = unfinished(path)
        except OSError:
            return False  # moved away while we looked
        if reason is None:
            return True
        self._seen[path.name] = _Seen(stamp, seen.since, waiting=True)
        self.on_note(f"waiting for {path.name}: it stopped growing, but {reason} (still being copied?)")
        return False

    def _handled(self, name: str, stamp: Stamp) -> bool:
        entry = self.state.get(name)
        return entry is not None and Stamp(entry["size"], entry["mtime"]) == stamp

    def _record(self, ready: Ready, outcome: str, detail: object) -> None:
        entry = {"size": ready.stamp.size, "mtime": ready.stamp.mtime, "outcome": outcome, "detail": detail}
        if outcome == "done":
            entry["stem"] = self.stem_for(ready.path.name)
        self.state[ready.path.name] = entry
        save_state(self.state_file, self.state)
