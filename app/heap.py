"""Keeps the garbage collector's full passes short while a long transcript is open.

A three-hour transcript is a few hundred thousand small objects (words, lines, the tuples that
hold them) that live as long as the document and hold no reference cycles. CPython's collector
starts a full pass once enough new objects have survived since the last one, and a full pass
visits every object in the process: 80–200 ms on a 2-core machine, on whichever thread allocated
last (the GUI thread after an edit, the writer during a save) while every other thread waits.

`HeapSettler` moves what exists into the collector's permanent generation (`gc.freeze()`, a
constant-time list splice) `SETTLE_MS` after the document changed (the first change since the
last settle: steady editing settles every `SETTLE_MS`, it does not postpone it), so a full pass
visits only what was made since. Frozen objects are still freed by reference counting when their
last reference goes; a reference cycle among them (the window's own objects form some) waits
for `release()`, called when the window closes, which hands everything back to the collector.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

SETTLE_MS = 1500  # after a change: by then an edit's idle work (shifted rows, row heights) is done


class HeapSettler(QObject):
    def __init__(self, parent: QObject | None = None, delay_ms: int = SETTLE_MS) -> None:
        super().__init__(parent)
        self._timer = QTimer(self, singleShot=True, interval=delay_ms)
        self._timer.timeout.connect(gc.freeze)

    def poke(self) -> None:
        """Something changed: settle `delay_ms` from now, or sooner if a settle is due already."""
        if not self._timer.isActive():
            self._timer.start()

    def release(self) -> None:
        """Hand every frozen object back to the collector (the window is closing)."""
        self._timer.stop()
        gc.unfreeze()
