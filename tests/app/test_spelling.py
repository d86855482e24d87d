"""Spell checking the transcript: which words are flagged, what is suggested, where Next goes."""

from __future__ import annotations

import pytest

from app.spelling import Speller


@pytest.fixture(scope="module")
def speller() -> Speller:
    found = Speller.load("en")
    if found is None:
        pytest.skip("no English word list installed (pyspellchecker)")
    return found


def test_unknown_words_are_flagged_but_not_numbers_acronyms_or_contractions(speller):
    text = "Teh budjet for Q3 is 40 percent over; NASA didn't recieve it."
    flagged = [text[s:e] for s, e in speller.misspelled(text)]
    assert flagged == ["Teh", "budjet", "recieve"]


def test_suggestions_are_ranked_by_frequency_and_keep_the_capital(speller):
    assert speller.suggestions("recieve")[0] == "receive"
    assert speller.suggestions("Teh")[0] == "The"
    assert "budjet" not in speller.suggestions("budjet")


def test_an_added_word_is_no_longer_flagged(speller):
    assert speller.misspelled("Ask Murmurbot") == [(4, 13)]
    speller.add("Murmurbot")
    assert speller.misspelled("Ask Murmurbot") == []


def test_next_misspelling_walks_forward_across_lines_and_wraps_once(speller):
    texts = ["A good line.", "One speling mistake and anothr.", "Fine again."]
    assert speller.next_misspelling(texts, 0, 0) == (1, 4, 11)
    assert speller.next_misspelling(texts, 1, 5) == (1, 24, 30)
    assert speller.next_misspelling(texts, 2, 0) == (1, 4, 11), "wraps to the first lines"
    assert speller.next_misspelling(["All fine."], 0, 0) is None


def test_a_language_without_a_word_list_turns_spelling_off():
    assert Speller.load("xx") is None


def test_next_misspelling_with_the_real_key_then_a_suggestion_fixes_the_line(make_window, qtbot, speller):
    from PySide6.QtCore import Qt
    from qt_helpers import show_transcript

    from engine.types import Transcript, Utterance

    window = make_window()
    lines = (Utterance(0.0, 2.0, "All good here.", "a"), Utterance(2.0, 4.0, "We need a budjet for it.", "a"),
             Utterance(4.0, 6.0, "Murmurbot says hi.", "b"))  # fmt: skip
    show_transcript(window, Transcript(lines))
    qtbot.waitUntil(lambda: window.spelling.speller is not None, timeout=20_000)
    view = window.transcript_view
    view.select_row(0)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_F7, Qt.KeyboardModifier.ShiftModifier)
    editor = view.row_delegate.editor
    assert editor is not None and view.current_source_row() == 1
    assert editor.textCursor().selectedText() == "budjet"
    menu = window.spelling.menu_for(editor, editor.cursorRect().center())
    first = menu.actions()[0]
    assert first.text() == "budget"
    first.trigger()
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert window.model.utterance(1).text == "We need a budget for it."
    qtbot.keyClick(view, Qt.Key.Key_F7, Qt.KeyboardModifier.ShiftModifier)  # on to the next one
    editor = view.row_delegate.editor
    assert editor.textCursor().selectedText() == "Murmurbot"
    learn = next(a for a in window.spelling.menu_for(editor, editor.cursorRect().center()).actions()
                 if a.text().startswith("Add"))  # fmt: skip
    learn.trigger()
    assert "murmurbot" in window.store.value("spelling_words", [])
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    qtbot.keyClick(view, Qt.Key.Key_F7, Qt.KeyboardModifier.ShiftModifier)
    assert window.statusBar().currentMessage() == "No misspelled words"


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_the_word_list_read_piece_by_piece_is_the_packages_word_for_word(language):
    # catches: an entry lost or cut where one piece ends and the next begins (`end + 2`, a piece
    # that starts at its separator), or the last entry dropped
    import gzip
    import json
    import pkgutil

    from app.spelling import word_counts

    text = gzip.decompress(pkgutil.get_data("spellchecker", f"resources/{language}.json.gz")).decode("utf-8")
    assert word_counts(text) == json.loads(text)
    assert word_counts(text, piece=997) == json.loads(text)


def test_a_separator_inside_a_word_makes_the_piece_longer_instead_of_failing():
    # catches: a piece cut at a `, "` that ends a word (a JSON error, and no spell check at all)
    from app.spelling import word_counts

    text = '{"plain": 3, "odd, ": 2, "last": 7}'  # the `, "` after "odd" closes the word "odd, "
    assert word_counts(text, piece=1) == {"plain": 3, "odd, ": 2, "last": 7}


def test_a_language_without_a_word_list_has_no_speller():
    # catches: a missing list raising instead of turning the spell check off
    assert Speller.load("xx") is None and Speller.load("../en") is None
