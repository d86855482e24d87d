"""The transcript table's cells, one view on a real model: the text editor's keys and caret, what
a commit writes into the line, the find marks and speaker chips as painted, the speaker combo."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QEvent, QModelIndex, QPoint, QRect, QSortFilterProxyModel, Qt
from PySide6.QtGui import (
    QColor,
    QFontMetrics,
    QImage,
    QKeyEvent,
    QPainter,
    QStandardItemModel,
    QTextOption,
    QUndoStack,
)
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

from app import commands
from app import speakers as sp
from app.transcript_model import END, SPEAKER, START, TEXT, TranscriptModel
from app.widgets.transcript_delegates import (
    CURRENT_MATCH,
    MATCH,
    PAD_X,
    PAD_Y,
    LineTextEdit,
    source_model,
    text_height,
)
from app.widgets.transcript_view import TranscriptView
from engine.types import Speaker, Transcript, Utterance

LINES = (
    Utterance(0.0, 2.0, "hello there world", "S1"),
    Utterance(2.0, 4.0, "second line here", "S2"),
    Utterance(4.0, 6.0, "third line", None),
)
GROUND = "#808080"  # what a cell is painted on in these tests
FULL = QRect(0, 0, 10_000, 10_000)
BOOK = (sp.SpeakerInfo("S1", "Ada", "#1B1B1B"), sp.SpeakerInfo("S2", "Bo", "#F5F5F5"))


@pytest.fixture
def view(qapp: QApplication) -> Iterator[TranscriptView]:
    model = TranscriptModel(QUndoStack())
    transcript = Transcript(LINES, (Speaker("S1", "Ada"), Speaker("S2", "Bo")), duration=6.0)
    commands.set_document(model, transcript, BOOK, "Transcribe")
    shown = TranscriptView(model)
    shown.resize(900, 400)
    shown.show()
    QApplication.processEvents()
    yield shown
    shown.close()
    shown.deleteLater()
    QApplication.processEvents()


def open_text(view: TranscriptView, row: int) -> LineTextEdit:
    view.select_row(row)
    QTest.keyClick(view, Qt.Key.Key_F2)
    editor = view.row_delegate.editor
    assert isinstance(editor, LineTextEdit)
    return editor


def settle() -> None:
    """Deliver what Qt posted, closed editors' deferred deletion included."""
    QApplication.processEvents()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    QApplication.processEvents()


def colours_in(image: QImage, rect: QRect) -> set[str]:
    return {
        image.pixelColor(x, y).name().upper()
        for x in range(max(rect.left(), 0), min(rect.right(), image.width() - 1))
        for y in range(max(rect.top(), 0), min(rect.bottom(), image.height() - 1))
    }


def test_a_cell_with_no_text_is_one_line_high_and_a_long_text_wraps_to_more(qapp):
    metrics = QFontMetrics(QApplication.font())
    one = metrics.height() + PAD_Y + 4
    assert text_height(metrics, "", 30) == one  # bug: the empty text measured as "XX XX" (wraps at 20 px)
    assert text_height(metrics, "word", 400) == one
    long = " ".join(["word"] * 30)
    width = metrics.horizontalAdvance(long) + 6  # wider than the text, not once the padding is off
    assert text_height(metrics, long, width) == 2 * metrics.height() + PAD_Y + 4  # bug: `width + PAD_X`
    assert text_height(metrics, long, 10_000) == one


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


def paint_cell(view: TranscriptView, row: int, column: int, selected: bool = False) -> QImage:
    """One cell as its delegate paints it, on a grey ground (the delegate called as the view does)."""
    index = view.model().index(row, column)
    size = view.visualRect(index).size()
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.fill(QColor(GROUND))
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = QRect(QPoint(0, 0), size)
    if selected:
        option.state |= QStyle.StateFlag.State_Selected
    painter = QPainter(image)
    try:
        view.itemDelegateForColumn(column).paint(painter, option, index)
    finally:
        painter.end()
    return image


def spans(image: QImage, colour: str) -> tuple[int, int, int, int] | None:
    """(left, top, right, bottom) of the pixels of exactly `colour`, or None."""
    xs, ys = [], []
    for y in range(image.height()):
        for x in range(image.width()):
            if image.pixelColor(x, y).name().upper() == colour:
                xs.append(x)
                ys.append(y)
    return (min(xs), min(ys), max(xs), max(ys)) if xs else None


def test_find_marks_every_match_yellow_and_the_current_one_orange(view):
    assert MATCH not in colours_in(paint_cell(view, 0, TEXT), FULL)
    view.row_delegate.find(re.compile("l"), (0, 3))  # "hello there world": l at 2, 3 and 15
    seen = colours_in(paint_cell(view, 0, TEXT), FULL)
    assert MATCH in seen and CURRENT_MATCH in seen
    third = colours_in(paint_cell(view, 2, TEXT), FULL)  # "third line": none is the current one
    assert MATCH in third and CURRENT_MATCH not in third
    view.row_delegate.find(None, None)
    assert MATCH not in colours_in(paint_cell(view, 0, TEXT), FULL)


def test_a_mark_starts_where_the_text_starts_in_the_cell(view):
    view.row_delegate.find(re.compile("h"), (0, 0))  # the first letter of "hello there world"
    left, top, _, _ = spans(paint_cell(view, 0, TEXT), CURRENT_MATCH)
    assert (left, top) == (PAD_X // 2 - 2, PAD_Y // 2)  # bug: the clip from 1, a margin of 1, another offset


def test_a_current_match_in_a_filtered_view_is_found_by_its_line_in_the_document(view):
    view.filter.set_speaker("S2")  # line 1 alone, shown as row 0
    view.row_delegate.find(re.compile("line"), (1, len("second ")))
    assert CURRENT_MATCH in colours_in(paint_cell(view, 0, TEXT), FULL)  # bug: the view's row (0) taken
    outer = QSortFilterProxyModel()  # a filter over the filter: mapped through both
    outer.setSourceModel(view.model())
    image = QImage(400, 60, QImage.Format.Format_ARGB32)
    image.fill(QColor(GROUND))
    painter = QPainter(image)
    try:
        view.row_delegate.paint(painter, option_of(view, QRect(0, 0, 400, 60)), outer.index(0, TEXT))
    finally:
        painter.end()
    assert CURRENT_MATCH in colours_in(image, FULL)


def test_a_marked_line_wraps_as_the_cell_does(view):
    metrics = view.fontMetrics()
    width = view.columnWidth(TEXT)
    words = ["ab"]
    while metrics.horizontalAdvance(" ".join([*words, "zz"])) < width - 6:
        words.append("ab")
    view.source.change_rows({0: Utterance(0.0, 2.0, " ".join([*words, "zz"]), "S1")})
    view.row_delegate.find(re.compile("zz"), None)
    _, top, _, _ = spans(paint_cell(view, 0, TEXT), MATCH)
    assert top > metrics.height()  # on the second line: the text is laid out 12 px narrower than the cell


def test_an_empty_line_shows_no_mark(view):
    view.source.change_rows({2: Utterance(4.0, 6.0, "", None)})
    view.row_delegate.find(re.compile("X"), None)
    assert MATCH not in colours_in(paint_cell(view, 2, TEXT), FULL)


def test_a_marked_line_keeps_the_themes_text_colour_and_the_selection_colour_when_selected(view):
    palette = view.palette()
    palette.setColor(palette.ColorRole.Text, QColor("#0000C8"))
    palette.setColor(palette.ColorRole.HighlightedText, QColor("#00C800"))
    palette.setColor(palette.ColorRole.Highlight, QColor("#400040"))
    view.setPalette(palette)
    view.row_delegate.find(re.compile("zzz|d"), None)
    plain = colours_in(paint_cell(view, 0, TEXT), FULL)
    picked = colours_in(paint_cell(view, 0, TEXT, selected=True), FULL)
    assert "#0000C8" in plain and "#00C800" not in plain and "#000000" in plain  # marked letters black
    assert "#00C800" in picked and "#400040" in picked


def test_a_speaker_chip_is_the_speakers_colour_with_text_that_contrasts(view):
    metrics = view.fontMetrics()
    dark = paint_cell(view, 0, SPEAKER)
    left, top, right, bottom = spans(dark, "#1B1B1B")
    assert (left, top) == (4 + 1, 4)  # its round ends' outermost pixels are blended with the ground
    assert right + 1 - left == metrics.horizontalAdvance("Ada") + 16 - 2
    assert bottom + 1 - top == metrics.height() + 4
    ink = spans(dark, "#FFFFFF")
    assert ink is not None and left + 8 <= ink[0] and ink[2] <= right and top <= ink[1] and ink[3] <= bottom
    assert dark.pixelColor(left + 2, top + 2).name().upper() != "#1B1B1B"  # round ends
    light = paint_cell(view, 1, SPEAKER)
    assert spans(light, "#F5F5F5") is not None and spans(light, "#000000") is not None
    assert spans(paint_cell(view, 2, SPEAKER), sp.UNASSIGNED_COLOR) is not None


def test_a_long_speaker_name_is_cut_to_its_chip_and_the_chip_to_its_cell(view):
    name = "Bartholomew Featherstonehaugh-Smythe of Upper Wallop"
    view.source.change_rows({}, (sp.SpeakerInfo("S1", name, "#1B1B1B"), BOOK[1]))
    view.setColumnWidth(SPEAKER, 100)
    view.setRowHeight(0, view.fontMetrics().height() + 6)  # a short row: the chip fits in it
    image = paint_cell(view, 0, SPEAKER)
    left, top, right, bottom = spans(image, "#1B1B1B")
    assert right + 1 - left == 100 - 8 - 2 and bottom + 1 - top == image.height() - 6
    ink = spans(image, "#FFFFFF")
    assert ink is not None and ink[2] <= right


def test_a_selected_lines_speaker_cell_is_the_selection_colour_and_others_their_tint(view):
    palette = view.palette()
    palette.setColor(palette.ColorRole.Highlight, QColor("#400040"))
    view.setPalette(palette)
    view.source.set_current_row(2)
    picked = paint_cell(view, 1, SPEAKER, selected=True)
    assert picked.pixelColor(picked.width() - 2, picked.height() - 2).name() == "#400040"
    heard = paint_cell(view, 2, SPEAKER)
    assert heard.pixelColor(heard.width() - 2, heard.height() - 2).name().upper() == "#FFF1C2"
    plain = paint_cell(view, 0, SPEAKER)
    assert plain.pixelColor(plain.width() - 2, plain.height() - 2).name().upper() == GROUND


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


def option_of(view: TranscriptView, rect: QRect | None = None) -> QStyleOptionViewItem:
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    if rect is not None:
        option.rect = rect
    return option


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
