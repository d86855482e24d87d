"""Editing like the editors people like: multi-line in-place editing with the caret where the
user clicked, Tab to the next line, click a line or a word to seek, the words with their times and
doubtful words marked, skipping 5 s, and keeping the reader's place when the transcript is
replaced (the final stitch of a transcription)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt, QUrl
from PySide6.QtWidgets import QApplication
from qt_helpers import open_demo

from app import commands, edits
from app import speakers as sp
from app.transcript_model import TEXT
from app.widgets.line_text_edit import LineTextEdit
from app.widgets.word_view import WordView
from engine.types import Speaker, Transcript, Utterance, Word

LONG = (
    "We looked at the budget for the next quarter and agreed that the schedule is tight, so the "
    "release may move to the end of the month unless the review finds nothing new in the data."
)


def timed(text: str, start: float, probabilities: list[float | None] | None = None) -> Utterance:
    words = text.split()
    probs = probabilities or [0.9] * len(words)
    pairs = enumerate(zip(words, probs, strict=True))
    ws = tuple(Word(start + i * 0.3, start + i * 0.3 + 0.25, w, p) for i, (w, p) in pairs)
    return Utterance(start, start + len(words) * 0.3, text, "a", ws)


@pytest.fixture
def window(make_window):
    w = make_window()
    rows = [timed(LONG, 0.0), timed("Short one.", 60.0), timed("And a third line here.", 70.0)]
    rows += [timed(f"Line number {i} of the meeting.", 80.0 + 5 * i) for i in range(30)]
    transcript = Transcript(tuple(rows), (Speaker("a", "Ada"),), duration=400.0)
    commands.set_document(w.model, transcript, sp.book_from_transcript(transcript), "Load")
    QApplication.processEvents()
    return w


def click_text(window, qtbot, row: int, x: int, y: int = 12) -> LineTextEdit:
    view = window.transcript_view
    rect = view.visualRect(view.filter.index(row, TEXT))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.topLeft() + QPoint(x, y))
    qtbot.waitUntil(lambda: view.row_delegate.editor is not None, timeout=3000)
    return view.row_delegate.editor


def test_a_long_line_wraps_in_its_row_and_edits_in_place_with_the_caret_at_the_click(window, qtbot):
    view = window.transcript_view
    assert view.rowHeight(0) > 1.4 * view.rowHeight(1)  # the long line wraps onto more lines
    view.select_row(0)
    QApplication.processEvents()
    editor = click_text(window, qtbot, 0, x=30)
    assert isinstance(editor, LineTextEdit) and editor.toPlainText() == LONG
    assert not editor.textCursor().hasSelection()  # nothing is selected: typing does not replace
    assert 0 < editor.cursorPosition() < 12  # …and the caret is near the click, at the start
    qtbot.keyClicks(editor, "XYZ")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: view.row_delegate.editor is None)
    text = window.model.utterance(0).text
    assert "XYZ" in text[:16] and text.replace("XYZ", "") == LONG


def test_tab_saves_the_line_and_moves_to_the_next_lines_text(window, qtbot):
    view = window.transcript_view
    editor = view.edit_text(1)
    editor.setPlainText("Short one, edited.")
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: view.edit_cursor() is not None and view.edit_cursor()[0] == 2, timeout=3000)
    assert window.model.utterance(1).text == "Short one, edited."
    assert view.row_delegate.editor.toPlainText() == "And a third line here."
    qtbot.keyClick(view.row_delegate.editor, Qt.Key.Key_Backtab)
    qtbot.waitUntil(lambda: view.edit_cursor() is not None and view.edit_cursor()[0] == 1, timeout=3000)


def test_a_line_opened_before_the_last_editor_is_deleted_stays_the_line_being_typed(window, qtbot):
    """Return on one line, F2 on the next before the event loop has deleted the first editor: the
    first editor's late deletion must not make the view forget the open one (a finished run would
    then drop what is typed in it)."""
    view = window.transcript_view
    first = view.edit_text(1)
    qtbot.keyClick(first, Qt.Key.Key_Return)  # closed; its deletion waits for the event loop
    second = view.edit_text(2)
    assert second is not None and second is not first
    qtbot.keyClicks(second, " And more.")
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)  # the first editor goes now
    assert view.row_delegate.editor is second and view.edit_cursor() == (
        2,
        len("And a third line here. And more."),
    )
    view.commit_open_editor()
    assert window.model.utterance(2).text == "And a third line here. And more."


def test_clicking_a_line_seeks_to_it_and_moving_the_caret_onto_a_word_seeks_to_the_word(window, qtbot):
    window.transcript_view.select_row(2)
    assert window.playback.position == pytest.approx(70.0)
    editor = window.transcript_view.edit_text(2)
    editor.setCursorPosition(len("And a th"))  # inside "third", the third word
    assert window.playback.position == pytest.approx(window.model.utterance(2).words[2].start)


def test_the_word_view_shows_times_marks_doubtful_words_and_seeks_on_click(qtbot):
    view = WordView()
    qtbot.addWidget(view)
    u = timed("maybe we said this", 10.0, [0.95, 0.31, 0.88, 0.42])
    view.show_utterance(u)
    assert view.low_confidence() == [1, 3]
    assert "0:10.0" in view.toPlainText() and "0:10.3" in view.toPlainText()
    assert view.tooltip_for(1) == "we: 0:10.3–0:10.6, 31% sure"
    with qtbot.waitSignal(view.word_clicked) as clicked:
        view.anchorClicked.emit(QUrl("w:2"))
    assert clicked.args == [pytest.approx(10.6)]
    view.show_utterance(timed("no probabilities here", 0.0, [None, None, None]))  # e.g. VibeVoice
    assert view.low_confidence() == [] and "below" not in view.toPlainText()


def test_selecting_a_line_shows_its_words(window):
    window.transcript_view.select_row(1)
    assert window.word_view.utterance == window.model.utterance(1)


def test_back_and_forward_move_the_playhead_five_seconds(make_window):
    window = make_window()
    open_demo(window)
    window.playback.seek(20.0)
    window.actions_by_name["skip_forward"].trigger()
    assert window.playback.position == pytest.approx(25.0)
    window.actions_by_name["skip_back"].trigger()
    window.actions_by_name["skip_back"].trigger()
    assert window.playback.position == pytest.approx(15.0)


def test_replacing_the_transcript_keeps_the_selected_moment_and_the_scroll_position(window, qtbot):
    view = window.transcript_view
    view.select_row(20)
    view.verticalScrollBar().setValue(view.rowViewportPosition(15) + view.verticalOffset())
    top_time = window.model.utterance(view.source_row(view.rowAt(0))).start
    selected_time = window.model.utterance(20).start
    merged = list(window.model.utterances)
    merged[5:7] = [edits.merge(merged[5], merged[6])]  # the final stitch merges lines
    final = Transcript(tuple(merged), (Speaker("a", "Ada"),), duration=400.0)
    commands.set_document(window.model, final, window.model.book, "Transcribe")
    QApplication.processEvents()
    assert window.model.utterance(view.current_source_row()).start == selected_time
    assert window.model.utterance(view.source_row(view.rowAt(0))).start == top_time
    qtbot.waitUntil(lambda: not view.heights._sweep.isActive(), timeout=5000)  # the other rows, while idle
    assert window.model.utterance(view.source_row(view.rowAt(0))).start == top_time, "the place moved"


def test_a_replace_all_refits_rows_out_of_view_while_idle_and_keeps_the_top_line_in_place(window, qtbot):
    view = window.transcript_view
    view.scrollTo(view.filter.index(4, TEXT), view.ScrollHint.PositionAtTop)
    top = view.rowAt(0)
    y = view.rowViewportPosition(top)
    far = view.rowAt(view.viewport().height() - 1) + 3  # below the viewport
    assert 4 <= top < far < view.filter.rowCount()
    short = view.rowHeight(far)
    commands.replace_all(window.model, "meeting.", "meeting. " + LONG, case_sensitive=False)
    qtbot.waitUntil(lambda: view.rowHeight(far) > 1.4 * short, timeout=3000)  # wraps once refitted
    assert view.rowHeight(1) == short  # a line without a match keeps its height
    assert view.rowAt(0) == top and view.rowViewportPosition(top) == y  # the reader's place
    window.undo_stack.undo()
    qtbot.waitUntil(lambda: view.rowHeight(far) == short, timeout=3000)
