"""A speaker's menu, the same wherever a speaker is shown: the Speakers panel and the speaker cell
of a transcript line.

- `menu_entries(info)`: what the menu offers for a speaker, as (text, command) pairs: for a name
  recognised from the known voices first "Recognised as Bob (0.94)" (command None: a fact, not a
  command), then Rename Speaker…, Remember This Voice… and, for that recognised name, "Not Bob".
- `speaker_menu(book, speaker_id, choose, parent)`: those entries as a `QMenu`; choosing one
  calls `choose(command, speaker_id)`. The window carries the commands out (`app.voice_tools`),
  so both places share one implementation; an unknown speaker gets an empty menu.
- `is_menu_key(event)`: the context-menu key or Shift+F10, which open it from the keyboard.
- `SpeakerCellMenu` watches a `TranscriptView`: a right-click on a line's speaker cell, or the
  context-menu key / Shift+F10 on the current line (whatever cell holds the focus), emits
  `requested(speaker_id, global position)`. Lines without a speaker ask for nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QContextMenuEvent, QKeyEvent
from PySide6.QtWidgets import QMenu, QWidget

from app import speakers as sp
from app.known_voices import recognised_short
from app.transcript_model import SPEAKER
from app.widgets.transcript_view import TranscriptView

RENAME, REMEMBER, NOT_RECOGNISED = "rename", "remember", "not_recognised"
Choose = Callable[[str, str], None]  # (command, speaker id)


def menu_entries(info: sp.SpeakerInfo) -> list[tuple[str, str | None]]:
    entries: list[tuple[str, str | None]] = []
    if info.score is not None:
        entries.append((recognised_short(info.name, info.score), None))
    entries += [("Rename Speaker…", RENAME), ("Remember This Voice…", REMEMBER)]
    if info.score is not None:
        entries.append((f"Not {info.name}", NOT_RECOGNISED))
    return entries


def speaker_menu(book: sp.SpeakerBook, speaker_id: str, choose: Choose, parent: QWidget | None) -> QMenu:
    menu = QMenu(parent)
    info = sp.find(book, speaker_id)
    for text, command in menu_entries(info) if info is not None else []:
        action = menu.addAction(text)
        if command is None:
            action.setEnabled(False)
        else:
            action.triggered.connect(lambda _=False, c=command: choose(c, speaker_id))
    return menu


def is_menu_key(event: QKeyEvent) -> bool:
    """The context-menu key, or Shift+F10 (its stand-in on keyboards without one)."""
    shift_f10 = event.key() == Qt.Key.Key_F10 and event.modifiers() == Qt.KeyboardModifier.ShiftModifier
    return shift_f10 or event.key() == Qt.Key.Key_Menu


class SpeakerCellMenu(QObject):
    """Asks for the speaker menu of a transcript line (see the module contract)."""

    requested = Signal(str, QPoint)  # speaker id, where the menu goes (global coordinates)

    def __init__(self, view: TranscriptView) -> None:
        super().__init__(view)
        self.view = view
        view.installEventFilter(self)
        view.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(event, QContextMenuEvent):
            if event.reason() != QContextMenuEvent.Reason.Mouse:
                return self._ask(None)
            return watched is self.view.viewport() and self._ask(event.pos())  # (the view: passed up)
        pressed = isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress
        if pressed and watched is self.view and is_menu_key(event):
            self._ask(None)
            return True
        return False

    def _ask(self, at: QPoint | None) -> bool:
        """Ask for the menu of the speaker cell at `at` (viewport coordinates; None: the current
        line's); True when the event was a speaker cell's."""
        view = self.view
        index = view.currentIndex() if at is None else view.indexAt(at)
        if not index.isValid() or (at is not None and index.column() != SPEAKER):
            return False
        speaker = view.source.utterance(view.filter.mapToSource(index).row()).speaker
        if speaker is None:
            return True
        if at is None:
            view.scrollTo(index)
        cell = view.visualRect(index.siblingAtColumn(SPEAKER))
        self.requested.emit(speaker, view.viewport().mapToGlobal(at if at is not None else cell.center()))
        return True
