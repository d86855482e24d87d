"""The spell check of the line editors (`app.widgets.spell_check.SpellCheck`) on real editors and the
real English word list: what is underlined and when, what the context menu offers and does, what is
remembered, and what "Next Misspelling" says when it cannot look."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QPoint, QTimer
from PySide6.QtGui import QColor, QTextCharFormat
from PySide6.QtWidgets import QApplication, QPlainTextEdit
from qt_helpers import make_store

from app.settings import SettingsStore
from app.spelling import Speller
from app.widgets.spell_check import COLLECT_MS, WORDS_KEY, SpellCheck

LINE = "We need a budjet for it."  # "budjet" is characters 10 to 16


@pytest.fixture(scope="module")
def english() -> Speller:
    pytest.importorskip("spellchecker")
    found = Speller.load("en")
    assert found is not None
    return found


@pytest.fixture
def store(tmp_path: Path) -> SettingsStore:
    return make_store(tmp_path)


@pytest.fixture
def check(qapp, store: SettingsStore) -> Iterator[SpellCheck]:
    spelling = SpellCheck(store)
    yield spelling
    for loader in [t for t in threading.enumerate() if t.name == "murmur-spelling"]:
        loader.join(30)
    QCoreApplication.processEvents()


def ready(check: SpellCheck, english: Speller) -> SpellCheck:
    """`check` with English loaded, as `want("en")` leaves it (a fresh list of the user's words)."""
    check.language, check.speller = "en", Speller(english.checker, "en", set())
    return check


def editor_with(qtbot, text: str) -> QPlainTextEdit:
    editor = QPlainTextEdit(text)
    qtbot.addWidget(editor)
    editor.resize(600, 80)
    editor.show()
    return editor


def underlined(editor: QPlainTextEdit) -> list[str]:
    text, formats = editor.toPlainText(), editor.document().firstBlock().layout().formats()
    spell = QTextCharFormat.UnderlineStyle.SpellCheckUnderline
    return [text[r.start : r.start + r.length] for r in formats if r.format.underlineStyle() == spell]


def at(editor: QPlainTextEdit, position: int) -> QPoint:
    cursor = editor.textCursor()
    cursor.setPosition(position)
    return editor.cursorRect(cursor).center()


def loaders() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "murmur-spelling"]


def test_a_chosen_language_loads_in_the_background_and_underlines_open_editors_but_not_the_users_words(
    qtbot, check, store
):
    store.set_value(WORDS_KEY, ["murmurbot"])
    editor = editor_with(qtbot, "Murmurbot needs a budjet.")
    check.attach(editor)
    assert underlined(editor) == []  # nothing is known before the list is in
    check.want("en")
    assert check.speller is None and loaders()  # read on a thread of its own
    assert all(t.daemon for t in loaders())  # quitting never waits for a word list
    qtbot.waitUntil(lambda: check.speller is not None, timeout=30_000)
    assert underlined(editor) == ["budjet"]
    (mark,) = editor.document().firstBlock().layout().formats()
    assert mark.format.underlineColor() == QColor("#D0312D")
    loaded = check.speller
    qtbot.waitUntil(lambda: not loaders(), timeout=30_000)  # the loader ends just after it hands over
    check.want("en")  # the same language again: nothing is read again
    assert check.speller is loaded and not loaders()


def test_a_language_asked_for_while_another_loads_is_the_one_kept(qtbot, check):
    messages: list[str] = []
    check.message.connect(messages.append)
    check.want("en")
    check.want("xx")  # no word list: asked for after English, answered before it
    assert check.next_in([LINE], 0, 0) is None
    for loader in loaders():
        loader.join(30)
    qtbot.waitUntil(lambda: not check.loading)  # English arrives last, for a language no longer wanted
    qtbot.wait(3 * COLLECT_MS)
    assert check.speller is None and check.language == "xx"
    assert check.next_in([LINE], 0, 0) is None
    assert messages == [
        "The spelling dictionary for “xx” is still loading",
        "No spelling dictionary for “xx”",
    ]


def test_the_window_goes_on_while_the_word_list_loads(qtbot, check, monkeypatch):
    # catches: the window's thread waiting for the loader (asking a future for its result too early)
    release = threading.Event()

    def slow(language, words):
        release.wait(10)
        return None

    monkeypatch.setattr(Speller, "load", staticmethod(slow))
    threading.Timer(2.0, release.set).start()  # a safety net: a blocked window is freed at last
    check.want("en")
    qtbot.wait(4 * COLLECT_MS)  # the collector has looked several times
    assert check.loading and not release.is_set()  # still loading, and the window went on meanwhile
    release.set()
    qtbot.waitUntil(lambda: not check.loading)


def test_a_word_list_that_fails_to_load_is_said_and_leaves_nothing_underlined(qtbot, check, monkeypatch):
    def broken(language, words):
        raise MemoryError("no room for the word list")

    monkeypatch.setattr(Speller, "load", staticmethod(broken))
    messages: list[str] = []
    check.message.connect(messages.append)
    check.want("en")
    qtbot.waitUntil(lambda: bool(messages))
    assert messages == ["The spelling dictionary for “en” could not be read: no room for the word list"]
    assert check.speller is None and check.next_in([LINE], 0, 0) is None
    assert messages[1:] == ["No spelling dictionary for “en”"]


def test_next_misspelling_without_a_transcript_says_so_and_with_one_finds_the_word_or_says_none(
    check, english
):
    messages: list[str] = []
    check.message.connect(messages.append)
    assert check.next_in([], 0, 0) is None
    assert messages == ["No spelling dictionary yet: there is no transcript"]
    ready(check, english)
    assert check.next_in(["Teh budjet.", LINE], 0, 1) == (0, 4, 10)  # after the caret at 1
    assert messages[1:] == []  # found: nothing to say
    assert check.next_in(["All good."], 0, 0) is None
    assert messages[1:] == ["No misspelled words"]


@pytest.mark.parametrize("position", [10, 13, 16])  # on the word's first letter, inside, just after it
def test_the_context_menu_on_an_unknown_word_leads_with_corrections_and_one_replaces_it(
    qtbot, check, english, position
):
    editor = editor_with(qtbot, LINE)
    ready(check, english).attach(editor)
    menu = check.menu_for(editor, at(editor, position))
    texts = [a.text() for a in menu.actions()]
    suggestions = english.suggestions("budjet")
    assert suggestions[0] == "budget" and texts[: len(suggestions) + 1] == [
        *suggestions, "Add “budjet” to Dictionary"]  # fmt: skip
    assert menu.actions()[len(suggestions) + 1].isSeparator()
    assert texts[len(suggestions) + 2 :] == [a.text() for a in editor.createStandardContextMenu().actions()]
    menu.actions()[0].trigger()
    assert editor.toPlainText() == "We need a budget for it."
    assert editor.textCursor().position() == 16  # the caret after the correction


def test_the_context_menu_off_an_unknown_word_or_before_the_list_is_in_is_the_editors_own(
    qtbot, check, english
):
    editor = editor_with(qtbot, LINE)
    check.attach(editor)
    own = [a.text() for a in editor.createStandardContextMenu().actions()]
    assert [a.text() for a in check.menu_for(editor, at(editor, 12)).actions()] == own  # not loaded
    ready(check, english)
    assert [a.text() for a in check.menu_for(editor, at(editor, 4)).actions()] == own  # on "need"


def test_a_word_with_no_corrections_says_so_and_adding_it_is_remembered_sorted_and_unmarks_it(
    qtbot, check, english, store
):
    editor = editor_with(qtbot, "Zqxwvjkp and budjet.")
    other = editor_with(qtbot, "budjet")
    ready(check, english).attach(editor)
    check.attach(other)
    gone = editor_with(qtbot, "budjet")
    check.attach(gone)
    gone.deleteLater()  # a closed editor is no longer underlined (and nothing fails on it)
    qtbot.waitUntil(lambda: len(check._highlighters) == 2)
    for highlighted in (editor, other):
        highlighted.document().firstBlock().layout()  # laid out once the list is in
    check._rehighlight()
    assert underlined(editor) == ["Zqxwvjkp", "budjet"]
    menu = check.menu_for(editor, at(editor, 3))
    none, learn = menu.actions()[:2]
    assert (none.text(), none.isEnabled(), learn.text()) == (
        "(no suggestions)",
        False,
        "Add “Zqxwvjkp” to Dictionary",
    )
    learn.trigger()
    check.add_word("Budjet")
    assert store.value(WORDS_KEY, []) == ["budjet", "zqxwvjkp"]
    assert underlined(editor) == [] and underlined(other) == []


def test_a_word_added_before_the_list_is_in_is_not_remembered(check, store):
    check.add_word("budjet")
    assert store.value(WORDS_KEY, None) is None


def test_right_clicking_an_unknown_word_opens_the_menu_of_corrections_there(qtbot, check, english):
    editor = editor_with(qtbot, LINE)
    ready(check, english).attach(editor)
    seen: list[tuple[list[str], QPoint]] = []

    def look() -> None:  # runs inside the open menu's event loop
        popup = QApplication.activePopupWidget()
        if popup is not None:
            seen.append(([a.text() for a in popup.actions()][:1], popup.pos()))
            popup.close()

    QTimer.singleShot(0, look)
    where = at(editor, 12)
    editor.customContextMenuRequested.emit(where)
    assert seen == [(["budget"], editor.mapToGlobal(where))]


def test_a_spell_check_belongs_to_the_window_that_made_it(qapp, store):
    from PySide6.QtWidgets import QWidget

    window = QWidget()
    assert SpellCheck(store, window).parent() is window  # closed with it, not left behind
    window.deleteLater()
