"""The transcript table's editors, one view on a real model: the text editor's keys and caret,
what a commit writes into the line, the speaker combo, and the calls the view makes on the
delegates."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QEvent, QModelIndex, QPoint, QRect, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor, QKeyEvent, QStandardItemModel, QTextOption
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)
from table_helpers import open_text, option_of, settle, shown_table

from app import speakers as sp
from app.transcript_model import END, SPEAKER, START, TEXT
from app.widgets.transcript_delegates import (
    CURRENT_MATCH,
    MATCH,
    PAD_X,
    PAD_Y,
    LineTextEdit,
    source_model,
)
from app.widgets.transcript_view import TranscriptView


@pytest.fixture
def view(qapp: QApplication) -> Iterator[TranscriptView]:
    yield from shown_table()


def test_enter_commits_the_typed_text_with_its_spaces_collapsed_and_closes_the_editor(view):
    editor = open_text(view, 0)
    assert editor.text() == "hello there world" and editor.cursorPosition() == len("hello there world")
    editor.selectAll()
    QTest.keyClicks(editor, "fixed   text ")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    settle()
    assert view.source.utterance(0).text == "fixed text"
    assert not view.is_editing() and view.row_delegate.editor is None


def test_the_keypads_enter_commits_too_and_shift_enter_types_a_new_line(view):
    editor = open_text(view, 1)
    QTest.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    QTest.keyClicks(editor, "more")
    assert editor.toPlainText() == "second line here\nmore" and view.is_editing()
    QTest.keyClick(editor, Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier)
    assert view.source.utterance(1).text == "second line here more"
    assert not view.is_editing()


def test_committing_an_unchanged_line_adds_nothing_to_undo(view):
    stack = view.source.undo_stack
    before = stack.count()
    editor = open_text(view, 0)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    assert stack.count() == before  # bug: `==` for `!=`: an edit that changes nothing is an undo step


def test_tab_commits_and_opens_the_next_lines_text_and_shift_tab_the_previous(view):
    editor = open_text(view, 1)
    QTest.keyClicks(editor, "!")
    moves: list[int] = []
    view.row_delegate.move_requested.connect(moves.append)
    QTest.keyClick(editor, Qt.Key.Key_Tab)
    assert view.source.utterance(1).text == "second line here!"
    assert moves == [1]
    QTest.qWait(20)
    QApplication.processEvents()
    assert view.current_source_row() == 2 and view.row_delegate.editor_row == 2
    nxt = view.row_delegate.editor
    assert nxt is not None and nxt is not editor and nxt.text() == "third line"
    QTest.keyClick(nxt, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert moves == [1, -1]
    QTest.qWait(20)
    QApplication.processEvents()
    assert view.current_source_row() == 1 and view.row_delegate.editor.text() == "second line here!"


def test_the_text_editor_keeps_tab_and_wraps_words(view):
    editor = open_text(view, 0)
    assert not editor.focusNextPrevChild(True) and not editor.tabChangesFocus()
    assert editor.accessibleName() == "Edit text"
    assert editor.wordWrapMode() == editor.wordWrapMode().WrapAtWordBoundaryOrAnywhere
    assert editor.frameShape() == editor.frameShape().NoFrame


def test_the_caret_is_placed_where_asked_and_kept_inside_the_text(view):
    editor = open_text(view, 0)
    editor.setCursorPosition(5)
    assert editor.cursorPosition() == 5
    editor.setCursorPosition(-3)
    assert editor.cursorPosition() == 0  # bug: `max(position, 1)`
    editor.setCursorPosition(999)
    assert editor.cursorPosition() == len("hello there world")
    view.row_delegate.place_caret(editor, None)
    assert editor.cursorPosition() == len("hello there world")
    editor.setCursorPosition(6)
    word = editor.cursorRect(editor.textCursor()).center()
    point = editor.pos() + editor.viewport().pos() + word + QPoint(1, 0)
    editor.setCursorPosition(0)
    view.row_delegate.place_caret(editor, point)
    assert editor.cursorPosition() == 6  # the click's point, in the view's viewport


def test_a_repaint_while_typing_leaves_the_typed_text_and_caret_alone(view):
    editor = open_text(view, 0)
    QTest.keyClicks(editor, " again")
    editor.setCursorPosition(3)
    view.row_delegate.setEditorData(editor, view.model().index(0, TEXT))
    assert editor.text() == "hello there world again" and editor.cursorPosition() == 3


def test_a_repaint_of_an_untouched_editor_keeps_its_caret_and_a_line_changed_meanwhile_refills_it(view):
    editor = open_text(view, 0)
    editor.setCursorPosition(2)
    view.row_delegate.setEditorData(editor, view.model().index(0, TEXT))
    assert editor.cursorPosition() == 2  # bug: `and` for `or`: refilled, the caret at the end
    editor.setCursorPosition(2)
    view.row_delegate.setEditorData(editor, view.model().index(1, TEXT))  # another text, nothing typed
    assert editor.text() == "second line here" and editor.cursorPosition() == len("second line here")
    assert editor.filled == "second line here"


def test_a_fresh_editor_of_a_line_without_text_is_empty(view):
    # catches: a line with no text (a model that gives none) opening with placeholder words in it
    blank = QStandardItemModel(1, 1)
    editor = open_text(view, 0)
    editor.filled = None  # as created
    view.row_delegate.setEditorData(editor, blank.index(0, 0))
    assert editor.text() == "" and editor.filled == ""


def test_the_text_editor_is_at_least_two_lines_high(view):
    editor = open_text(view, 2)
    row = view.visualRect(view.model().index(2, TEXT))
    assert editor.geometry().topLeft() == row.topLeft() and editor.width() == row.width()
    assert editor.height() == max(row.height(), view.fontMetrics().height() * 2 + PAD_Y)


def test_time_cells_edit_in_a_line_edit_and_are_one_line_high(view):
    option = QStyleOptionViewItem()
    option.fontMetrics = view.fontMetrics()
    delegate = view.itemDelegate()
    hint = delegate.sizeHint(option, view.model().index(0, START))
    assert (hint.width(), hint.height()) == (60, view.fontMetrics().height() + PAD_Y + 4)
    view.select_row(0, START)
    QTest.keyClick(view, Qt.Key.Key_F2)
    editor = view.findChild(QLineEdit)
    assert editor is not None and editor.accessibleName() == "Edit time"
    assert view.row_delegate.editor is None  # a time editor is not the text editor


def test_the_editing_signal_says_which_editor_is_open_and_when_it_closed(view):
    seen: list[object] = []
    view.row_delegate.editing.connect(seen.append)
    editor = open_text(view, 0)
    assert seen == [editor]
    QTest.keyClick(editor, Qt.Key.Key_Escape)
    settle()  # the closed editor's deferred deletion
    assert seen == [editor, None] and view.row_delegate.editor is None
    assert view.row_delegate.editor_row is None


def test_an_old_editor_deleted_after_the_next_opened_does_not_close_the_open_one(view):
    first = open_text(view, 0)
    QTest.keyClick(first, Qt.Key.Key_Return)
    second = open_text(view, 1)  # before the first's deferred deletion
    settle()
    assert view.row_delegate.editor is second and view.row_delegate.editor_row == 1
    assert view.edit_cursor() == (1, len("second line here"))


def test_the_speaker_combo_lists_unassigned_and_the_speakers_and_sets_the_line(view):
    view.select_row(1, SPEAKER)
    QTest.keyClick(view, Qt.Key.Key_F2)
    combo = view.findChild(QComboBox)
    assert combo is not None and combo.accessibleName() == "Speaker"
    assert [combo.itemText(i) for i in range(combo.count())] == [sp.UNASSIGNED_NAME, "Ada", "Bo"]
    assert [combo.itemData(i) for i in range(combo.count())] == [None, "S1", "S2"]
    assert combo.currentText() == "Bo"
    combo.setCurrentIndex(1)
    view.commitData(combo)
    assert view.source.utterance(1).speaker == "S1"


def test_the_speaker_combo_of_an_unassigned_line_shows_unassigned(view):
    view.select_row(2, SPEAKER)
    QTest.keyClick(view, Qt.Key.Key_F2)
    combo = view.findChild(QComboBox)
    assert combo.currentIndex() == 0
    combo.setCurrentIndex(2)
    view.commitData(combo)
    assert view.source.utterance(2).speaker == "S2"


def test_the_source_model_is_found_through_filters_and_anything_else_is_refused(view):
    outer = QSortFilterProxyModel()
    outer.setSourceModel(view.model())
    assert source_model(outer.index(0, END)) is view.source
    other = QStandardItemModel(1, 1)
    with pytest.raises(TypeError, match=r"^the transcript view shows a TranscriptModel$"):
        source_model(other.index(0, 0))


def test_editors_and_delegates_belong_to_the_view(view):
    assert view.row_delegate.parent() is view
    assert view.itemDelegateForColumn(SPEAKER).parent() is view
    editor = open_text(view, 0)
    assert editor.parentWidget() is view.viewport()  # bug: a parentless editor, a window of its own


# The calls the view makes, made directly: a delegate's failure is then the test's failure, where
# through Qt's event handling it would be an error printed inside a paint or a key press.


def test_a_fresh_text_editor_wraps_words_has_no_frame_and_keeps_tab(qapp):
    editor = LineTextEdit()
    assert editor.wordWrapMode() == QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere
    assert editor.frameShape() == QPlainTextEdit.Shape.NoFrame and not editor.tabChangesFocus()
    assert editor.accessibleName() == "Edit text" and editor.filled is None


def test_the_text_editors_keys_commit_move_or_type(qapp):
    editor = LineTextEdit()
    said: list[object] = []
    editor.commit.connect(lambda: said.append("commit"))
    editor.move.connect(said.append)
    press = QEvent.Type.KeyPress
    none, shift = Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.ShiftModifier
    editor.keyPressEvent(QKeyEvent(press, Qt.Key.Key_Return, none))
    editor.keyPressEvent(QKeyEvent(press, Qt.Key.Key_Tab, none))
    editor.keyPressEvent(QKeyEvent(press, Qt.Key.Key_Backtab, shift))
    editor.keyPressEvent(QKeyEvent(press, Qt.Key.Key_A, none, "a"))
    editor.keyPressEvent(QKeyEvent(press, Qt.Key.Key_Return, shift))
    assert said == ["commit", 1, -1] and editor.toPlainText() == "a\n"


def test_the_text_delegate_opens_its_editor_on_the_viewport_and_says_so(view):
    seen: list[object] = []
    text = view.row_delegate
    text.editing.connect(seen.append)
    editor = text.createEditor(view.viewport(), option_of(view), view.model().index(1, TEXT))
    assert isinstance(editor, LineTextEdit) and editor.parentWidget() is view.viewport()
    assert text.editor is editor and text.editor_row == 1 and seen == [editor]
    closed: list[object] = []
    text.closeEditor.connect(lambda e, hint: closed.append((e, hint)))
    editor.commit.emit()
    assert closed == [(editor, QStyledItemDelegate.EndEditHint.SubmitModelCache)]
    text._close(editor, QStyledItemDelegate.EndEditHint.NoHint)
    assert closed[-1] == (editor, QStyledItemDelegate.EndEditHint.NoHint)


def test_the_text_editor_is_laid_over_its_cell_at_least_two_lines_high(view):
    editor = LineTextEdit(view.viewport())
    lines = view.fontMetrics().height() * 2 + PAD_Y
    view.row_delegate.updateEditorGeometry(editor, option_of(view, QRect(10, 20, 300, 15)), QModelIndex())
    assert editor.geometry() == QRect(10, 20, 300, lines)
    tall = QRect(10, 20, 300, lines + 30)
    view.row_delegate.updateEditorGeometry(editor, option_of(view, tall), QModelIndex())
    assert editor.geometry() == tall


def test_the_text_editor_is_filled_with_the_lines_text_caret_at_the_end(view):
    editor = LineTextEdit(view.viewport())
    view.row_delegate.setEditorData(editor, view.model().index(1, TEXT))
    assert editor.text() == "second line here" and editor.cursorPosition() == len("second line here")
    assert editor.filled == "second line here"


def test_the_text_written_back_is_the_editors_with_its_spaces_collapsed(view):
    editor = LineTextEdit(view.viewport())
    editor.setPlainText("  new\n   words ")
    view.row_delegate.setModelData(editor, view.model(), view.model().index(1, TEXT))
    assert view.source.utterance(1).text == "new words"


def test_the_speaker_combo_is_set_to_the_lines_speaker(view):
    speaker = view.itemDelegateForColumn(SPEAKER)
    combo = speaker.createEditor(view.viewport(), option_of(view), view.model().index(0, SPEAKER))
    speaker.setEditorData(combo, view.model().index(1, SPEAKER))
    assert combo.currentData() == "S2"
    speaker.setEditorData(combo, view.model().index(2, SPEAKER))
    assert combo.currentIndex() == 0


def test_the_speaker_chosen_in_the_combo_is_written_to_the_line(view):
    speaker = view.itemDelegateForColumn(SPEAKER)
    combo = speaker.createEditor(view.viewport(), option_of(view), view.model().index(0, SPEAKER))
    combo.setCurrentIndex(2)
    speaker.setModelData(combo, view.model(), view.model().index(0, SPEAKER))
    assert view.source.utterance(0).speaker == "S2"


def test_each_delegate_leaves_another_kinds_editor_alone(view):
    editor, combo = LineTextEdit(view.viewport()), QComboBox(view.viewport())
    speaker, text = view.itemDelegateForColumn(SPEAKER), view.row_delegate
    speaker.setEditorData(editor, view.model().index(0, SPEAKER))
    speaker.setModelData(editor, view.model(), view.model().index(0, SPEAKER))
    text.setEditorData(combo, view.model().index(1, TEXT))
    text.setModelData(combo, view.model(), view.model().index(1, TEXT))
    assert editor.filled is None and view.source.utterance(0).speaker == "S1"
    assert view.source.utterance(1).text == "second line here"


def _marked_columns(view: TranscriptView, color: str) -> list[int]:
    """The x of each viewport column where row 0 shows `color`."""
    view.viewport().repaint()
    image = view.viewport().grab().toImage()
    rect = view.visualRect(view.model().index(0, TEXT))
    want = QColor(color).rgb()
    return sorted({x for x in range(rect.left(), rect.right()) for y in range(rect.top(), rect.bottom())
                   if image.pixel(x, y) == want})  # fmt: skip


def test_a_search_marks_each_match_where_its_words_are_and_the_current_one_in_orange(view):
    # catches: matches not marked, the current one drawn like the others (or every one as
    # current), the marks shifted off their words
    rect = view.visualRect(view.model().index(0, TEXT))
    metrics = view.fontMetrics()
    view.row_delegate.find(re.compile("there"), (0, 6))
    orange = _marked_columns(view, CURRENT_MATCH)
    assert orange and not _marked_columns(view, MATCH)
    start = rect.left() + PAD_X // 2 - 2 + metrics.horizontalAdvance("hello ")
    assert abs(orange[0] - start) <= 2 and abs(orange[-1] - (start + metrics.horizontalAdvance("there"))) <= 2
    view.row_delegate.find(re.compile("there"), None)
    assert _marked_columns(view, MATCH) == orange and not _marked_columns(view, CURRENT_MATCH)
    view.row_delegate.find(None, None)
    assert not _marked_columns(view, MATCH)
