"""The find bar on its own, above a real table: what it counts and says, where Next and Previous
go, what Replace and Replace All change (one undo step), and the speaker filter it drives. Keys
are typed into its fields; the buttons are clicked."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QVBoxLayout, QWidget
from table_helpers import BOOK, SPEAKERS, settle

from app import commands
from app.transcript_model import TranscriptModel
from app.widgets.find_bar import FindBar
from app.widgets.transcript_view import ALL, TranscriptView
from engine.types import Transcript, Utterance

LINES = (
    Utterance(0.0, 2.0, "The cat sat. A cat!", "S1"),
    Utterance(2.0, 4.0, "Concatenate the Cat", "S2"),
    Utterance(4.0, 6.0, "no match here", None),
    Utterance(6.0, 8.0, "cat 42 and cat 7", "S1"),
)


class Bar:
    def __init__(self, bar: FindBar, model: TranscriptModel, undo: QUndoStack) -> None:
        self.bar, self.model, self.undo, self.said = bar, model, undo, []
        bar.message.connect(self.said.append)

    def search(self, text: str) -> None:
        self.bar.find_edit.clear()
        QTest.keyClicks(self.bar.find_edit, text)

    def click(self, text: str) -> None:
        buttons = [b for b in self.bar.findChildren(QPushButton) if b.text() == text]
        assert len(buttons) == 1, text
        buttons[0].click()

    @property
    def count(self) -> str:
        return self.bar.count.text()

    @property
    def current(self) -> tuple[int, int] | None:
        return (self.bar.current.row, self.bar.current.start) if self.bar.current else None

    def texts(self) -> list[str]:
        return [u.text for u in self.model.utterances]


@pytest.fixture
def found(qapp) -> Iterator[Bar]:
    undo = QUndoStack()
    model = TranscriptModel(undo)
    commands.set_document(model, Transcript(LINES, SPEAKERS, duration=8.0), BOOK, "Transcribe")
    window = QWidget()
    view = TranscriptView(model)
    bar = FindBar(model, view)
    layout = QVBoxLayout(window)
    layout.addWidget(bar)
    layout.addWidget(view)
    window.resize(900, 500)
    window.show()
    settle()
    yield Bar(bar, model, undo)
    window.close()
    window.deleteLater()
    settle()


def test_typing_a_query_counts_its_matches_in_every_line_and_clearing_it_says_nothing(found):
    found.search("cat")
    assert found.count == "6 found"  # case-blind, inside words too
    found.search("")
    assert found.count == ""
    found.search("zebra")
    assert found.count == "0 found"


def test_case_whole_words_and_regular_expressions_narrow_the_search(found):
    found.search("cat")
    found.bar.case.click()
    assert found.count == "5 found"  # "Cat" no longer
    found.bar.whole.click()
    assert found.count == "4 found"  # "Concatenate" no longer
    found.bar.case.click()
    assert found.count == "5 found"  # whole words, any case
    found.bar.whole.click()
    found.search(r"cat \d+")
    assert found.count == "0 found"  # literal text until the box is ticked
    found.bar.regex.click()
    assert found.count == "2 found"


def test_a_pattern_that_does_not_compile_says_why_in_place_of_the_count(found):
    found.bar.regex.click()
    found.search("cat(")
    assert found.count == "not a valid pattern: missing ), unterminated subpattern at position 3"
    found.click("▶")
    assert found.current is None and "found" not in found.count
    assert found.bar.view.row_delegate.pattern is None


def test_next_walks_the_matches_in_reading_order_from_the_selected_line_and_wraps(found):
    found.search("cat")
    found.bar.view.select_row(1)
    QTest.keyClick(found.bar.find_edit, Qt.Key.Key_Return)  # Return in the field is Next
    assert found.current == (1, 3) and found.count == "3 of 6"  # the first match at or after line 2
    assert found.bar.view.current_source_row() == 1
    for expected in [(1, 16), (3, 0), (3, 11), (0, 4)]:
        found.click("▶")
        assert found.current == expected
    assert found.count == "1 of 6" and found.bar.view.current_source_row() == 0


def test_previous_walks_back_and_wraps_to_the_last_match(found):
    found.search("cat")
    found.bar.view.select_row(0)
    found.click("▶")
    assert found.current == (0, 4)
    found.click("◀")
    assert found.current == (3, 11) and found.count == "6 of 6"
    found.click("◀")
    assert found.current == (3, 0) and found.count == "5 of 6"
    assert found.bar.view.current_source_row() == 3


def test_the_table_marks_every_match_and_the_current_one_apart(found):
    found.search("cat")
    delegate = found.bar.view.row_delegate
    assert delegate.pattern is not None and delegate.pattern.pattern.lower() == "cat"
    assert delegate.current is None
    found.bar.view.select_row(3)
    found.click("▶")
    assert delegate.current == (3, 0)
    found.search("")
    assert delegate.pattern is None and delegate.current is None


def test_replace_changes_the_current_match_then_moves_to_the_next(found):
    found.bar.toggle.click()
    assert found.bar.replace_row.isVisible()
    found.search("cat")
    QTest.keyClicks(found.bar.replace_edit, "dog")
    found.bar.view.select_row(0)
    found.click("Replace")  # no current match yet: finds the first
    assert found.current == (0, 4) and found.texts()[0] == "The cat sat. A cat!"
    found.click("Replace")
    assert found.texts()[0] == "The dog sat. A cat!"
    assert found.current == (0, 15)  # the next one, in the changed text
    found.click("Replace")
    assert found.texts()[0] == "The dog sat. A dog!" and found.current == (1, 3)


def test_a_regular_expression_replacement_may_use_its_groups(found):
    found.bar.regex.click()
    found.search(r"cat (\d+)")
    QTest.keyClicks(found.bar.replace_edit, r"\1 cats")
    found.bar.view.select_row(3)
    found.click("Replace")
    found.click("Replace")
    assert found.texts()[3] == "42 cats and cat 7"


def test_a_replacement_naming_a_missing_group_is_said_and_changes_nothing(found):
    found.bar.regex.click()
    found.search(r"cat (\d+)")
    QTest.keyClicks(found.bar.replace_edit, r"\2")
    found.bar.view.select_row(3)
    found.click("Replace")
    found.click("Replace")
    found.click("All")
    assert found.texts() == [u.text for u in LINES]
    assert len(found.said) == 2
    assert all(said.startswith("not a valid replacement: invalid group") for said in found.said)


def test_replace_all_changes_every_match_as_one_undo_step_and_says_how_many(found):
    found.search("cat")
    found.bar.whole.click()
    QTest.keyClicks(found.bar.replace_edit, "dog")
    found.click("All")
    assert found.said == ["Replaced 5 occurrence(s)"]
    assert found.texts()[:2] == ["The dog sat. A dog!", "Concatenate the dog"]
    assert found.count == "0 found" and found.current is None
    found.undo.undo()
    assert found.texts() == [u.text for u in LINES]


def test_replace_all_without_a_query_does_nothing(found):
    QTest.keyClicks(found.bar.replace_edit, "dog")
    found.click("All")
    assert found.said == [] and found.undo.count() == 1  # the transcript's own step only


def test_the_speaker_filter_lists_every_speaker_and_shows_only_the_chosen_ones_lines(found):
    box, view = found.bar.speaker_filter, found.bar.view
    assert [box.itemText(i) for i in range(box.count())] == ["All speakers", "Ada", "Bo", "Unassigned"]
    box.setCurrentIndex(1)
    assert view.model().rowCount() == 2 and view.filter.speaker == "S1"
    found.bar.set_speaker_filter(None)
    assert view.model().rowCount() == 1 and box.currentText() == "Unassigned"
    found.bar.set_speaker_filter("nobody")
    assert view.model().rowCount() == 4 and view.filter.speaker == ALL


def test_the_chosen_speaker_stays_chosen_when_the_speakers_change(found):
    found.bar.set_speaker_filter("S2")
    commands.rename_speaker(found.model, "S2", "Bea")  # the book changes: the list is built again
    box = found.bar.speaker_filter
    assert box.currentData() == "S2" and box.currentText() == "Bea"
    assert found.bar.view.model().rowCount() == 1
    commands.add_speaker(found.model, "Cy")
    assert box.currentData() == "S2" and box.count() == 5


def test_ctrl_h_shows_the_replace_field_with_the_cursor_in_it(found):
    assert not found.bar.replace_row.isVisible()
    found.bar.show_replace()
    QApplication.processEvents()
    assert found.bar.replace_row.isVisible() and found.bar.toggle.isChecked()
    assert QApplication.focusWidget() is found.bar.replace_edit or found.bar.replace_edit.hasFocus()
    found.bar.toggle.click()
    assert not found.bar.replace_row.isVisible()


def test_every_control_says_what_it_does_to_a_screen_reader_and_on_hover(found):
    bar = found.bar
    controls = {  # widget: (its text, its tooltip, its accessible name)
        bar.case: ("Aa", "Match case", "Match case"),
        bar.whole: ("W", "Whole words only", "Whole words"),
        bar.regex: (".*", r"Regular expression (the replacement may use \1, \g<name>)", "Regular expression"),
        bar.toggle: ("Replace", "Show the replace field (Ctrl+H)", "Show replace"),
        bar.speaker_filter: ("All speakers", "Show the utterances of one speaker only", "Show speaker"),
    }
    for widget, (text, tip, name) in controls.items():
        shown = widget.currentText() if widget is bar.speaker_filter else widget.text()
        assert (shown, widget.toolTip(), widget.accessibleName()) == (text, tip, name)
    buttons = {(b.text(), b.toolTip(), b.accessibleName()) for b in bar.findChildren(QPushButton)}
    assert buttons == {
        ("◀", "Previous match (Shift+F3)", "Previous match (Shift+F3)"),
        ("▶", "Next match (F3)", "Next match (F3)"),
        ("Replace", "Replace this match", "Replace this match"),
        ("All", "Replace every match (one undo step)", "Replace every match (one undo step)"),
    }
    for edit, placeholder, name in ((bar.find_edit, "Find", "Find text in the transcript"),
                                    (bar.replace_edit, "Replace with", "Replacement text")):  # fmt: skip
        assert (edit.placeholderText(), edit.accessibleName()) == (placeholder, name)
        assert edit.isClearButtonEnabled()
    labels = [label.text() for label in bar.findChildren(QLabel)]
    assert "Show" in labels and bar.count.text() == ""


def test_next_with_nothing_to_find_says_0_found_and_without_a_query_says_nothing(found):
    found.search("zebra")
    found.click("▶")
    assert found.count == "0 found" and found.current is None
    found.search("")
    found.click("▶")
    assert found.count == ""


def test_next_from_a_line_after_every_match_wraps_to_the_first(found):
    found.search("the")  # lines 1 and 2 only
    found.bar.view.select_row(3)
    found.click("▶")
    assert found.current == (0, 0) and found.count == "1 of 2"


def test_previous_finds_the_nearest_match_before_the_current_one(found):
    found.search("cat")
    found.bar.view.select_row(1)
    found.click("▶")
    assert found.current == (1, 3)
    found.click("◀")
    assert found.current == (0, 15) and found.count == "2 of 6"
    found.bar.view.select_row(3)
    found.search("cat")
    found.click("▶")
    found.click("▶")
    assert found.current == (3, 11)
    commands.edit_text(found.model, 3, "cat cat")  # the line changed under the current match
    found.click("◀")
    assert found.current == (3, 4)  # the last match before where the current one was


def test_replace_after_the_line_changed_under_the_match_finds_again_instead_of_replacing(found):
    found.search("cat")
    QTest.keyClicks(found.bar.replace_edit, "dog")
    found.bar.view.select_row(3)
    found.click("▶")
    assert found.current == (3, 0)
    commands.edit_text(found.model, 3, "a cat 42")
    found.click("Replace")
    assert found.texts()[3] == "a cat 42" and found.current == (3, 2)


def test_a_plain_replacement_is_inserted_as_typed_backslashes_and_all(found):
    found.search("cat 42")
    QTest.keyClicks(found.bar.replace_edit, r"C:\1")
    found.bar.view.select_row(3)
    found.click("Replace")
    found.click("Replace")
    assert found.texts()[3] == r"C:\1 and cat 7" and found.said == []


def test_a_replacement_that_holds_the_query_is_not_replaced_again(found):
    found.search("cat")
    found.bar.case.click()
    QTest.keyClicks(found.bar.replace_edit, "cats")
    found.bar.view.select_row(0)
    for _ in range(3):
        found.click("Replace")
    assert found.texts()[0] == "The cats sat. A cats!"

