"""The app's watch folder: what `murmur watch` does, in the background of the window.

`FolderWatch(store, pipeline)` keeps its choice in the settings (`watch_folder`; the transcripts go
to a "Transcripts" folder inside the watched one, `out`) and, once `start()`ed, polls
`engine.live.folder_watch.FolderWatcher` every `POLL_MS` on the GUI thread. Each ready file is
transcribed on one background thread by the pipeline `pipeline()` gives at that moment (in the
window: the engine the transcriptions use, with the window's settings then,
`app.remote_settings.run_pipeline`; nothing decodes in the window's process), exported (SRT, VTT,
TXT, JSON, DOCX) under the stem the watcher gives it (never another file's transcripts) and
recorded in the state file, so a restart of the app skips it; `transcribed(name, outputs)` or
`skipped(name, reason)` follow. Files are taken one at a time, in name order.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.background import step_back
from app.settings import SettingsStore
from engine.errors import MurmurError

POLL_MS = 1000
FORMATS = ("srt", "vtt", "txt", "json", "docx")
FOLDER_KEY, OUT_NAME = "watch_folder", "Transcripts"


class FolderWatch(QObject):
    transcribed = Signal(str, list)  # file name, output paths
    skipped = Signal(str, str)  # file name, reason
    changed = Signal(bool)  # watching or not

    def __init__(
        self, store: SettingsStore, pipeline: Callable[[], Any], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.store, self.pipeline = store, pipeline
        self.watcher: Any = None
        self._busy = threading.Event()
        self._stop = threading.Event()
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    @property
    def folder(self) -> Path | None:
        value = self.store.value(FOLDER_KEY, "")
        return Path(value) if value else None

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def start(self, folder: Path, settle_seconds: float = 2.0) -> None:
        """Watch `folder` (remembered); raises ValueError when it does not exist."""
        from engine.live.folder_watch import STATE_NAME, FolderWatcher

        self.out = folder / OUT_NAME
        self.watcher = FolderWatcher(folder, self.out / STATE_NAME, settle_seconds)
        self.store.set_value(FOLDER_KEY, str(folder))
        self._stop.clear()
        self._timer.start()
        self.changed.emit(True)

    def attach(self, action: Any, window: Any) -> None:
        """Driven by `window`'s Watch Folder `action` (checked while watching), told in its status
        bar; the folder chosen before a restart is watched again."""
        action.setCheckable(True)
        action.triggered.connect(lambda: window.show_message(self.toggle(window)))
        self.transcribed.connect(lambda name, _out: window.show_message(f"Watch folder: transcribed {name}"))
        self.skipped.connect(lambda name, why: window.show_message(f"Watch folder: skipped {name}: {why}"))
        self.changed.connect(action.setChecked)
        folder = self.folder  # read from the settings once
        if folder is not None and folder.is_dir():
            self.start(folder)

    def toggle(self, window: Any) -> str:
        """Stop watching, or ask `window`'s user for a folder to watch; what to tell them."""
        if self.active:
            self.stop()
            return "No longer watching a folder"
        from PySide6.QtWidgets import QFileDialog

        start = str(self.folder or Path.home())
        folder = QFileDialog.getExistingDirectory(window, "Watch a folder for new recordings", start)
        if not folder:
            self.changed.emit(False)
            return ""
        self.start(Path(folder))
        return f"Watching {folder}: new recordings are transcribed into {self.out}"

    def stop(self) -> None:
        """Stop watching and forget the folder."""
        self.shutdown()
        self.store.set_value(FOLDER_KEY, "")
        self.changed.emit(False)

    def shutdown(self) -> None:
        """Stop watching (closing the app); the folder stays chosen for the next start."""
        self._timer.stop()
        self._stop.set()

    def _poll(self) -> None:
        if self._busy.is_set() or self.watcher is None:
            return
        ready = self.watcher.poll()
        if ready:
            self._busy.set()
            threading.Thread(target=self._handle, args=(ready[0],), daemon=True, name="watch-folder").start()

    def _handle(self, ready: Any) -> None:
        from engine.export import export

        step_back()
        path = ready.path
        try:
            transcript = self.pipeline().run(path, None, self._stop)
            written = export(transcript, self.out, FORMATS, stem=self.watcher.stem_for(path.name))
        except (MurmurError, ValueError, OSError) as exc:
            if not self._stop.is_set():
                self._record(self.watcher.failed, ready, str(exc))
                self.skipped.emit(path.name, str(exc))
        else:
            self._record(self.watcher.done, ready, written)
            self.transcribed.emit(path.name, [str(p) for p in written])
        finally:
            self._busy.clear()

    def _record(self, outcome: Any, ready: Any, detail: Any) -> None:
        """The outcome into the state; a state that cannot be saved stays in memory for this run."""
        with contextlib.suppress(OSError):
            outcome(ready, detail)
