"""Stalls of the window's GUI thread as a user meets them: a heartbeat, and each key's time to show.

- `Heartbeat`: a 5 ms precise `QTimer` on the GUI thread. A gap between two of its ticks longer
  than the interval is time the window could not react to anything: a slot that ran long, the
  interpreter held by another thread (the engine's Python work), no free core. The gap minus the
  interval is booked to the scenario and to what went on longest during the gap (`doing`: a key
  being handled, the engine transcribing); only the largest per scenario is kept, with its label
  and, on Linux, how much of it the GUI thread spent runnable but waiting for a core (its run-queue
  time in `/proc/thread-self/schedstat`): the part of a stall that other programs' load, not the
  window's own work, made.
- `spin(seconds)` / `spin_until(condition)` run the real event loop (`QEventLoop.exec`, which
  waits in the platform's poll as the running app does), never a busy loop of `processEvents`.
- `Painted` notes when watched widgets last painted (the table, the waveform, the status bar, the
  toolbars and every button: a key whose effect is a button's new label, as Stop's, shows there);
  `Edits.press` sends one key with `QTest.keyClick` to a widget of the real window (shortcuts and
  all) and waits for the next paint of the window after it: that key's time to show. A key that
  did not take effect (an edit the window refused: the undo stack did not move) is counted as
  refused, never as fast.
- `Edits.round(row)` is the editing a reviewer does on one line with real keys: F2, type a word,
  Return; Ctrl+K (split); Ctrl+J (merge back); Ctrl+2 (speaker); Ctrl+Z (undo).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QEventLoop, QObject, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QToolBar, QWidget

K, M = Qt.Key, Qt.KeyboardModifier
INTERVAL_MS = 5
SHOW_LIMIT = 2.0  # seconds a key waits for its paint before it counts as "nothing shown"
SCHEDSTAT = "/proc/thread-self/schedstat"  # Linux: ns on a CPU, ns waiting on a run queue, slices


def run_queue_seconds() -> float:
    """Seconds the calling thread has spent runnable but waiting for a CPU (0.0 off Linux)."""
    try:
        with open(SCHEDSTAT) as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def spin(seconds: float) -> None:
    """Run the event loop for `seconds`."""
    loop = QEventLoop()
    QTimer.singleShot(max(int(seconds * 1000), 0), loop.quit)
    loop.exec()


def spin_until(condition: Callable[[], bool], limit: float, step: float = 0.02) -> bool:
    """Run the event loop until `condition()` holds (checked every `step` s); False after `limit` s."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            return False
        spin(step)
    return True


@dataclass
class Shown:
    """Per kind of key: the worst time to show, how often pressed, how often it took effect, how
    often it took effect but nothing was repainted within `SHOW_LIMIT`."""

    worst: dict[str, float] = field(default_factory=dict)
    pressed: dict[str, int] = field(default_factory=dict)
    applied: dict[str, int] = field(default_factory=dict)
    unseen: dict[str, int] = field(default_factory=dict)
    edits: set[str] = field(default_factory=set)  # the kinds that edit (their time counts as a stall)

    def add(self, what: str, seconds: float | None, applied: bool, edit: bool) -> None:
        if edit:
            self.edits.add(what)
        self.worst[what] = max(self.worst.get(what, 0.0), seconds or 0.0)
        self.pressed[what] = self.pressed.get(what, 0) + 1
        self.applied[what] = self.applied.get(what, 0) + int(applied)
        self.unseen[what] = self.unseen.get(what, 0) + int(applied and seconds is None)


class Heartbeat(QObject):
    """The largest late tick of a 5 ms GUI-thread timer, per scenario, with what was going on."""

    def __init__(self) -> None:
        super().__init__()
        self.timer = QTimer(self)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(INTERVAL_MS)
        self.timer.timeout.connect(self._tick)
        self.scenario, self._doing, self._before = "", "", ""  # `_before`: what went on at the last tick
        self._since: list[tuple[float, str]] = []  # (when, what) of the labels set since the last tick
        self.worst: dict[str, tuple[float, str]] = {}  # scenario → (seconds late, what)
        self.waited: dict[str, float] = {}  # scenario → run-queue seconds inside its worst gap
        self._queued = 0.0  # the GUI thread's run-queue seconds at the last tick
        self.ticks: dict[str, int] = {}
        self.shown: dict[str, Shown] = {}  # scenario → its keys' times to show (`Edits.press`)
        self._last: float | None = None

    @property
    def doing(self) -> str:
        return self._doing

    @doing.setter
    def doing(self, what: str) -> None:
        self._doing = what
        self._since.append((time.perf_counter(), what))

    @contextmanager
    def measuring(self, scenario: str) -> Iterator[None]:
        """Count the stalls of the block as `scenario`'s; the set-up around it is not counted."""
        self.scenario, self._doing, self._before, self._since = scenario, "waiting", "waiting", []
        self.worst.setdefault(scenario, (0.0, "nothing"))
        self.ticks.setdefault(scenario, 0)
        self.waited.setdefault(scenario, 0.0)
        self._last, self._queued = time.perf_counter(), run_queue_seconds()
        self.timer.start()
        try:
            yield
        finally:
            self._tick()  # the gap since the last tick: a stall at the block's end counts too
            self.timer.stop()
            self._last = None

    def _tick(self) -> None:
        now, queued = time.perf_counter(), run_queue_seconds()
        if self._last is not None:
            late = now - self._last - INTERVAL_MS / 1000
            if late > self.worst[self.scenario][0]:
                self.worst[self.scenario] = (late, self._longest_in_gap(now))
                self.waited[self.scenario] = queued - self._queued
            self.ticks[self.scenario] += 1
        self._last, self._since, self._before, self._queued = now, [], self._doing, queued

    def _longest_in_gap(self, now: float) -> str:
        """What went on longest between the last tick and `now` (labels change inside a gap)."""
        start, what = self._last or now, self._before
        longest, named = 0.0, what
        for changed, label in [*self._since, (now, "")]:
            if changed - start >= longest:
                longest, named = changed - start, what
            start, what = changed, label
        return named


class Painted(QObject):
    """When any watched widget last painted (perf_counter seconds)."""

    def __init__(self, widgets: list[QWidget]) -> None:
        super().__init__()
        self.last = 0.0
        for widget in widgets:
            self.watch(widget)

    def watch(self, widget: QWidget) -> None:
        widget.installEventFilter(self)

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.last = time.perf_counter()
        return False


class Edits:
    """Real keys on a real window, each timed from the press to the window's next paint."""

    def __init__(self, window: object, heartbeat: Heartbeat) -> None:
        self.window, self.heartbeat = window, heartbeat
        view = window.transcript_view  # type: ignore[attr-defined]
        self.view, self.stack = view, window.undo_stack  # type: ignore[attr-defined]
        watched = [view.viewport(), window.statusBar(), window.waveform.viewport()]  # type: ignore[attr-defined]
        buttons = window.findChildren(QAbstractButton)  # type: ignore[attr-defined]
        self.painted = Painted(watched + window.findChildren(QToolBar) + buttons)  # type: ignore[attr-defined]

    def press(
        self, what: str, key: K, mods: M = M.NoModifier, target: QWidget | None = None, edit: bool = False,
        took: Callable[[], bool] | None = None,
    ) -> bool:  # fmt: skip
        """Press `key` on `target` (the transcript view) and wait for the window's next paint.

        `took()` says, right after the key's handler ran (a key is handled synchronously), whether
        it took effect (an `edit` key: by default, the undo stack moved). A key that did not is
        counted as refused and not timed: a refusal already on show repaints nothing, and the next
        paint (a live line) would say nothing about the key. An `edit` key's time to show counts
        as a stall; another's (Ctrl+S: shown once written) is printed, its stall is the
        heartbeat's. True when it took effect."""
        self.heartbeat.doing = what
        index, started = self.stack.index(), time.perf_counter()
        QTest.keyClick(target or self.view, key, mods)
        if took is None:
            took = (lambda: self.stack.index() != index) if edit else (lambda: True)
        effect = took()
        if effect:
            self.heartbeat.doing = f"{what}, until shown"
            spin_until(lambda: self.painted.last > started, SHOW_LIMIT, step=0.001)
        seconds = (self.painted.last - started) if effect and self.painted.last > started else None
        self.heartbeat.shown.setdefault(self.heartbeat.scenario, Shown()).add(what, seconds, effect, edit)
        self.heartbeat.doing = "between keys"
        return effect

    def type_in(self, row: int, word: str) -> None:
        """F2 on `row`, `word` typed key by key, Return."""
        self.view.setFocus()
        self.view.select_row(row)
        opened = lambda: self.view.row_delegate.editor is not None  # noqa: E731
        self.press("open the line (F2)", K.Key_F2, edit=True, took=opened)
        editor = self.view.row_delegate.editor
        if editor is None:  # the window refused to open it (a read-only transcript)
            return
        self.painted.watch(editor.viewport())
        for ch in word:
            if not self._still_open(editor):
                return
            self.press("type a character", K(ord(ch.upper())), target=editor, edit=True, took=lambda: True)
        if self._still_open(editor):
            self.press("commit the line (Return)", K.Key_Return, target=editor, edit=True)

    def _still_open(self, editor: QWidget) -> bool:
        """False once the window has closed the line (a run that landed commits it and swaps the
        table): the rest of the word is not typed into a deleted editor."""
        from shiboken6 import isValid

        return isValid(editor) and self.view.row_delegate.editor is editor

    def round(self, row: int) -> None:
        """One line reviewed with real keys: type, split, merge back, speaker, undo."""
        rows = self.window.model.rowCount()  # type: ignore[attr-defined]
        if rows < 2:
            return
        row = min(row, rows - 2)
        self.type_in(row, " indeed")
        self.view.setFocus()
        self.view.select_row(row)
        self.press("split (Ctrl+K)", K.Key_K, M.ControlModifier, edit=True)
        self.view.select_row(row)
        self.press("merge (Ctrl+J)", K.Key_J, M.ControlModifier, edit=True)
        self.press("speaker (Ctrl+2)", K.Key_2, M.ControlModifier, edit=True)
        self.press("undo (Ctrl+Z)", K.Key_Z, M.ControlModifier, edit=True)
        spin(0.05)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def report(heartbeat: Heartbeat) -> tuple[float, str]:
    """Print each scenario's worst heartbeat stall and its keys; return the worst stall (a heartbeat
    gap or a key's time to show) and its name."""
    overall = (0.0, "nothing")
    for scenario, (late, doing) in heartbeat.worst.items():
        waited = heartbeat.waited.get(scenario, 0.0) * 1000
        print(f"[{scenario}] heartbeat: {heartbeat.ticks[scenario]} ticks, worst stall "
              f"{late * 1000:.0f} ms while {doing} ({waited:.0f} ms of it waiting for a CPU)")  # fmt: skip
        shown = heartbeat.shown.get(scenario, Shown())
        for what, seconds in shown.worst.items():
            verdict = "ok" if seconds <= 0.05 else "OVER"
            unseen = f", {shown.unseen[what]} repainted nothing" if shown.unseen[what] else ""
            changed = f"{shown.applied[what]} of {shown.pressed[what]} took effect{unseen}"
            print(
                f"[{scenario}]   {what:36s} worst to show {seconds * 1000:6.0f} ms {verdict:4s} ({changed})"
            )
            if what in shown.edits and seconds > overall[0]:
                overall = (seconds, f"{scenario}: {what}, to show")
        if late > overall[0]:
            overall = (late, f"{scenario}: {doing}")
    return overall
