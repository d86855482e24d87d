"""Writes project and autosave files on a background thread, so saving never stalls the window.

`ProjectWriter.submit(write, done)` runs `write()` on one worker thread: jobs run one at a time,
in the order they were submitted (a save, then the removal of the autosave it makes redundant,
never the other way round). `done(error)` is then called on the GUI thread with None, or with
the `OSError` / `ValueError` the write raised. The caller hands `write` only immutable data (a
snapshot taken on the GUI thread, built into a `Project` and encoded here), so the user may keep
editing while it is written.
`wait()` finishes every pending job and delivers its `done` at once: before the window closes,
before a file the writer may still touch is moved, and in tests.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from PySide6.QtCore import QObject, Signal

from app.background import step_back

Done = Callable[[Exception | None], None]


class ProjectWriter(QObject):
    _finished = Signal(int, object)  # job number, the error or None (emitted on the worker thread)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="murmur-save", initializer=step_back)
        self._pending: dict[int, tuple[Future[Exception | None], Done | None]] = {}
        self._next = 0
        self._finished.connect(self._deliver)  # queued: the signal comes from the worker thread

    @property
    def busy(self) -> bool:
        return bool(self._pending)

    def submit(self, write: Callable[[], object], done: Done | None = None) -> None:
        job, self._next = self._next, self._next + 1

        def run() -> Exception | None:
            try:
                write()
                error = None
            except (OSError, ValueError) as exc:
                error = exc
            self._finished.emit(job, error)
            return error

        self._pending[job] = (self._pool.submit(run), done)

    def wait(self) -> None:
        """Finish every pending write now and report each (on this, the GUI, thread)."""
        while self._pending:
            job = min(self._pending)
            self._deliver(job, self._pending[job][0].result())

    def shutdown(self) -> None:
        self.wait()
        self._pool.shutdown(wait=True)

    def _deliver(self, job: int, error: Exception | None) -> None:
        entry = self._pending.pop(job, None)
        if entry is not None and entry[1] is not None:
            entry[1](error)
