"""Spell checking the transcript: which words are flagged, what is suggested, where Next goes."""

from __future__ import annotations

import pytest

from app.spelling import Speller


@pytest.fixture(scope="module")
def speller() -> Speller:
    pytest.importorskip("spellchecker")  # the app's pinned dependency: with it, English must load
    found = Speller.load("en")
    assert found is not None, "pyspellchecker is installed but its English list did not load"
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


def test_a_curly_apostrophe_joins_like_a_straight_one_and_two_capitals_are_an_acronym_but_one_is_not(speller):
    # catches: the curly apostrophe not read as a straight one ("didn’t" flagged); a lone capital
    # letter taken for an acronym (`>= 1` for `> 1`); a two-letter acronym flagged (`> 2`)
    text = "We didn’t see the UK on TV, nor the É."
    assert [text[s:e] for s, e in speller.misspelled(text)] == ["É"]


def test_a_word_too_long_to_be_near_any_listed_word_is_offered_no_suggestions_not_itself(speller):
    # catches: the word itself offered as its own correction (its capitals or lower case compared
    # wrongly: `upper()` for `lower()` in the lookup or in what is left out)
    word = "Donaudampfschifffahrtselektrizitaetenhauptbetriebswerkbauunterbeamtengesellschaft"
    assert speller.misspelled(word) == [(0, len(word))]
    assert speller.suggestions(word) == []


def test_next_misspelling_finds_a_word_starting_at_the_offset_and_nothing_without_lines(speller):
    # catches: a word that starts at the cursor skipped (`>` for `>=`); no lines at all raising
    # (`ZeroDivisionError`, `IndexError`) instead of saying there is nothing to find
    texts = ["Teh start.", "And anothr."]
    assert speller.next_misspelling(texts, 0, 0) == (0, 0, 3)
    assert speller.next_misspelling(texts, 1, 4) == (1, 4, 10)
    assert speller.next_misspelling([], 0, 0) is None


def test_a_language_tag_with_a_region_loads_its_languages_list_keeps_the_tag_and_the_users_words():
    # catches: the tag's language upper-cased or the region not split off (no list found: spelling
    # off), the tag not kept as the checker's language, the user's words dropped or not lower-cased
    pytest.importorskip("spellchecker")
    speller = Speller.load("en-GB", ["Murmurbot"])
    assert speller is not None and speller.language == "en-GB"
    assert speller.misspelled("Murmurbot and murmurbot say helo") == [(28, 32)]


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


def test_a_compact_word_list_without_spaces_after_its_commas_reads_whole():
    # catches: the next piece starting one character past its separator (`end + 2`: the key's
    # opening quote lost where no space follows the comma)
    from app.spelling import word_counts

    assert word_counts('{"plain":3,"odd, ":2,"last":7}', piece=1) == {"plain": 3, "odd, ": 2, "last": 7}


def test_a_damaged_word_list_is_refused_rather_than_read_forever():
    # catches: `>` for `>=` at the body's end (the last piece, still not valid JSON, grows forever)
    from app.spelling import word_counts

    with pytest.raises(ValueError):
        word_counts('{"plain": 3, "cut": }', piece=1)


def test_a_language_without_a_word_list_has_no_speller():
    # catches: a missing list raising instead of turning the spell check off
    assert Speller.load("xx") is None and Speller.load("../en") is None


@pytest.mark.parametrize("piece", [1, 2, 4, 5000])
def test_a_word_list_loaded_in_slices_makes_the_checker_loading_it_whole_would(piece):
    # catches: a slice's words, its last word or a last shorter slice dropped (4 of 6: 4 then 2), a word
    # kept in its capitals, counts of words differing only in case not summed, the totals, letters
    # or longest word taken from the last slice only
    from spellchecker import SpellChecker

    from app.spelling import fill

    counts = {"Apple": 2, "apple": 3, "Zürich": 1, "be": 4, "extraordinarily": 1, "x": 9}
    whole, sliced = SpellChecker(language=None), SpellChecker(language=None)
    whole.word_frequency.load_json(counts)
    fill(sliced.word_frequency, counts, piece=piece)
    assert sliced.word_frequency.dictionary == whole.word_frequency.dictionary == {
        "apple": 5, "zürich": 1, "be": 4, "extraordinarily": 1, "x": 9}  # fmt: skip
    for total in ("total_words", "unique_words", "letters", "longest_word_length"):
        assert getattr(sliced.word_frequency, total) == getattr(whole.word_frequency, total), total
    assert sliced.candidates("aple") == whole.candidates("aple") == {"apple"}


def test_the_english_list_loads_in_slices_to_the_same_checker_as_in_one_call():
    # catches: the slices drifting from what the pinned pyspellchecker's own loader builds
    import gzip
    import pkgutil

    from spellchecker import SpellChecker

    from app.spelling import _checker, word_counts

    text = gzip.decompress(pkgutil.get_data("spellchecker", "resources/en.json.gz")).decode("utf-8")
    whole = SpellChecker(language=None)
    whole.word_frequency.load_json(word_counts(text))
    sliced = _checker("en").word_frequency
    assert sliced.dictionary == whole.word_frequency.dictionary
    assert (sliced.total_words, sliced.unique_words, sliced.longest_word_length, sliced.letters) == (
        whole.word_frequency.total_words, whole.word_frequency.unique_words,
        whole.word_frequency.longest_word_length, whole.word_frequency.letters)  # fmt: skip


def test_the_word_list_loader_holds_no_qt_object_and_a_closed_window_raises_nothing(monkeypatch, tmp_path):
    import threading

    import shiboken6
    from PySide6.QtCore import QObject
    from qt_helpers import make_store

    from app.widgets import spell_check

    release, errors = threading.Event(), []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))

    def slow_load(language, words):
        release.wait(5)
        return None

    monkeypatch.setattr(spell_check.Speller, "load", staticmethod(slow_load))
    check = spell_check.SpellCheck(make_store(tmp_path))
    check.want("en")
    loader = next(t for t in threading.enumerate() if t.name == "murmur-spelling")
    given = [getattr(loader._target, "__self__", None), *loader._args]  # what the thread can reach
    assert not [x for x in given if isinstance(x, QObject)]  # a Qt object the GUI may delete meanwhile
    shiboken6.delete(check)  # the window and its spell check are gone
    release.set()
    loader.join(5)
    assert not loader.is_alive() and errors == []
