"""A line being typed when a run's result takes the table's place is kept and opened again on the
same line, the caret where it was, whatever moved around it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app import commands
from app import speakers as sp
from app.typed_line import TypedLine, close_typed, reopen_typed, row_of
from engine.types import Speaker, Transcript, Utterance


def lines(*rows: tuple[float, float, str]) -> Transcript:
    return Transcript(tuple(Utterance(a, b, text, "a") for a, b, text in rows), (Speaker("a", "Ada"),))


def show(model, transcript: Transcript) -> None:
    model.set_document(transcript.utterances, sp.book_from_transcript(transcript), transcript)


def test_the_typed_line_is_found_among_lines_that_start_with_it(make_window):
    model = make_window().model
    show(model, lines((0.0, 2.0, "before"), (5.0, 6.0, "other"), (5.0, 7.0, "typed"), (5.0, 8.0, "late")))
    assert row_of(model, TypedLine(5.0, 7.0, "typed", 0)) == 2  # not the first or last to start there
    assert row_of(model, TypedLine(5.0, 8.0, "late", 0)) == 3
    assert row_of(model, TypedLine(0.0, 2.0, "before", 0)) == 0  # the first row


def test_the_first_row_and_a_line_of_no_length_are_found_too(make_window):
    model = make_window().model
    show(model, lines((0.0, 3.0, "first"), (0.0, 4.0, "second"), (5.0, 6.0, "other"), (5.0, 5.0, "blip")))
    assert row_of(model, TypedLine(0.0, 3.0, "first", 0)) == 0  # not the one playing at 0.0
    assert row_of(model, TypedLine(5.0, 5.0, "blip", 0)) == 3  # not "other", which plays at 5.0


def test_a_typed_line_the_swap_changed_opens_the_line_at_its_time_or_the_nearest(make_window):
    model = make_window().model
    show(model, lines((0.0, 2.0, "one"), (5.0, 7.0, "two"), (20.0, 22.0, "three")))
    assert row_of(model, TypedLine(5.5, 6.0, "gone", 0)) == 1  # inside "two"
    assert row_of(model, TypedLine(12.0, 13.0, "gone", 0)) == 1  # between lines: the nearer one
    assert row_of(model, TypedLine(40.0, 41.0, "gone", 0)) == 2  # after every line: the last


def test_closing_keeps_the_text_and_reopening_puts_the_caret_back_on_the_moved_line(make_window, qtbot):
    window = make_window()
    model, view = window.model, window.transcript_view
    show(model, lines((0.0, 2.0, "one"), (5.0, 7.0, "two"), (20.0, 22.0, "three")))
    editor = view.edit_text(1)
    qtbot.keyClicks(editor, " more")
    editor.setCursorPosition(3)
    typed = close_typed(view, model)
    assert typed == TypedLine(5.0, 7.0, "two more", 3)
    assert not view.is_editing() and model.utterance(1).text == "two more"
    swapped = lines((0.0, 1.0, "new"), (1.0, 2.0, "lines"), (5.0, 7.0, "two more"), (20.0, 22.0, "three"))
    commands.set_document(model, swapped, sp.book_from_transcript(swapped), "Transcribe")
    reopen_typed(view, model, typed)
    QApplication.processEvents()
    assert view.edit_cursor() == (2, 3), "not the typed line, or the caret moved"
    qtbot.keyClick(view.row_delegate.editor, Qt.Key.Key_Return)
    assert model.utterance(2).text == "two more"


def test_nothing_is_opened_when_nothing_was_being_typed(make_window):
    window = make_window()
    model, view = window.model, window.transcript_view
    show(model, lines((0.0, 2.0, "one")))
    assert close_typed(view, model) is None and close_typed(None, model) is None
    reopen_typed(view, model, None)
    assert not view.is_editing()
