"""Spell checking while editing a line: misspelled words underlined, suggestions on right-click.

`SpellCheck` loads the word list of the transcript's language off the GUI thread (`want`; the
first load takes about two seconds), underlines unknown words in every open line editor (`attach`),
and puts the suggestions and "Add to Dictionary" at the top of the editor's context menu
(`menu_for`). Added words are remembered between runs (the settings key `spelling_words`).
`next_in(texts, row, offset)` is where "Next Misspelling" goes. Without a word list for the
language, nothing is underlined and `next_in` says why through `message`.

The loader thread touches no Qt object: it fills a `Future`, which a timer of the GUI thread
collects. A window closed while the list loads is deleted by the GUI thread; a loader that emitted
a signal of the closing window's spell check at that moment could crash the process.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future

from PySide6.QtCore import QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QSyntaxHighlighter, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QMenu, QPlainTextEdit

from app.background import step_back
from app.settings import SettingsStore
from app.spelling import Speller

WORDS_KEY = "spelling_words"
COLLECT_MS = 50  # how often the GUI thread looks whether a word list is in


class SpellHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument, check: SpellCheck) -> None:
        super().__init__(document)
        self.check = check
        self.format = QTextCharFormat()
        self.format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SpellCheckUnderline)
        self.format.setUnderlineColor(QColor("#D0312D"))

    def highlightBlock(self, text: str) -> None:
        speller = self.check.speller
        for start, end in speller.misspelled(text) if speller is not None else ():
            self.setFormat(start, end - start, self.format)


class SpellCheck(QObject):
    message = Signal(str)

    def __init__(self, store: SettingsStore, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.speller: Speller | None = None
        self.language: str | None = None
        self._pending: Future[Speller | None] | None = None  # filled by the loader of `language`
        self._highlighters: list[SpellHighlighter] = []
        self._collector = QTimer(self, interval=COLLECT_MS)
        self._collector.timeout.connect(self._collect)

    @property
    def loading(self) -> bool:
        """The word list of `language` is being read."""
        return self._pending is not None

    def want(self, language: str) -> None:
        """Check spelling in `language` (loaded in the background; a no-op if already chosen)."""
        if language == self.language:
            return
        self.language, self.speller = language, None
        words = [str(w) for w in self.store.value(WORDS_KEY) or []]  # none stored: None
        self._pending = Future()
        args = (self._pending, language, words)
        threading.Thread(target=_load, args=args, name="murmur-spelling", daemon=True).start()
        self._collector.start()

    def _collect(self) -> None:
        """The GUI thread takes the word list once it is in (a list asked for before the latest
        `want` was dropped with its future)."""
        if self._pending is None or not self._pending.done():
            return
        self._collector.stop()
        pending, self._pending = self._pending, None
        if (error := pending.exception()) is not None:
            self.message.emit(f"The spelling dictionary for “{self.language}” could not be read: {error}")
            return
        self.speller = pending.result()
        self._rehighlight()

    def _rehighlight(self) -> None:
        for h in self._highlighters:
            h.rehighlight()

    def attach(self, editor: QPlainTextEdit) -> None:
        """Underline unknown words in `editor` and offer suggestions on its context menu."""
        highlighter = SpellHighlighter(editor.document(), self)
        self._highlighters.append(highlighter)
        editor.destroyed.connect(lambda: self._highlighters.remove(highlighter))
        editor.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        editor.customContextMenuRequested.connect(
            lambda pos: self.menu_for(editor, pos).exec(editor.mapToGlobal(pos))
        )

    def menu_for(self, editor: QPlainTextEdit, pos: QPoint) -> QMenu:
        """The editor's context menu, led by corrections when `pos` is on an unknown word."""
        menu = editor.createStandardContextMenu(pos)
        span = self._word_at(editor, editor.cursorForPosition(pos).position())
        if span is None or self.speller is None:
            return menu
        start, end = span
        word = editor.toPlainText()[start:end]
        first = menu.actions()[0] if menu.actions() else None
        suggestions = self.speller.suggestions(word) or []
        for suggestion in suggestions:
            action = menu.addAction(suggestion)
            action.triggered.connect(lambda _=False, s=suggestion: self._replace(editor, start, end, s))
            menu.insertAction(first, action)
        if not suggestions:
            menu.insertAction(first, none := menu.addAction("(no suggestions)"))
            none.setEnabled(False)
        learn = menu.addAction(f"Add “{word}” to Dictionary")
        learn.triggered.connect(lambda: self.add_word(word))
        menu.insertAction(first, learn)
        menu.insertSeparator(first)
        return menu

    def _word_at(self, editor: QPlainTextEdit, position: int) -> tuple[int, int] | None:
        if self.speller is None:
            return None
        spans = self.speller.misspelled(editor.toPlainText())
        return next(((s, e) for s, e in spans if s <= position <= e), None)

    def _replace(self, editor: QPlainTextEdit, start: int, end: int, text: str) -> None:
        cursor = editor.textCursor()
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(text)
        editor.setTextCursor(cursor)

    def add_word(self, word: str) -> None:
        if self.speller is not None:
            self.speller.add(word)
            self.store.set_value(WORDS_KEY, sorted(self.speller.own))
            self._rehighlight()

    def next_in(self, texts: list[str], row: int, offset: int) -> tuple[int, int, int] | None:
        if self.speller is None:
            if self.language is None:
                self.message.emit("No spelling dictionary yet: there is no transcript")
            elif self.loading:
                self.message.emit(f"The spelling dictionary for “{self.language}” is still loading")
            else:
                self.message.emit(f"No spelling dictionary for “{self.language}”")
            return None
        found = self.speller.next_misspelling(texts, row, offset)
        if found is None:
            self.message.emit("No misspelled words")
        return found


def _load(into: Future[Speller | None], language: str, words: list[str]) -> None:
    """The loader thread: reads the word list into `into`, touching no Qt object."""
    step_back()
    try:
        into.set_result(Speller.load(language, words))
    except BaseException as exc:  # handed over with the result, never raised in the thread
        into.set_exception(exc)
