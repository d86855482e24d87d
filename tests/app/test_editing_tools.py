"""The editing tools a transcript editor is expected to have, through the window's menus and
keys: delete and insert lines, find with every match marked, go to a time, shift every time,
merge consecutive lines of one speaker — each one undoable step."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtCore import Qt
from qt_helpers import answer_next_input

from app import commands


@pytest.fixture
def window(demo_window):
    return demo_window


def test_delete_removes_the_selected_lines_and_undo_brings_them_back(window, qtbot):
    before = window.model.utterances
    view = window.transcript_view
    view.select_row(3)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Delete)
    assert window.model.utterances == before[:3] + before[4:]
    assert window.undo_stack.undoText() == "Delete 1 line(s)"
    window.actions_by_name["undo"].trigger()
    assert window.model.utterances == before


def test_delete_in_the_line_editor_deletes_a_character_not_the_line(window, qtbot):
    rows, text = window.model.rowCount(), window.model.utterance(1).text
    view = window.transcript_view
    view.select_row(1)
    qtbot.keyClick(view, Qt.Key.Key_F2)
    editor = view.row_delegate.editor
    qtbot.keyClick(editor, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert window.model.rowCount() == rows
    assert window.model.utterance(1).text == text[1:]


def test_an_inserted_empty_line_opens_for_typing_after_the_selected_one(window, qtbot):
    rows, u = window.model.rowCount(), window.model.utterance(5)
    window.transcript_view.select_row(5)
    window.actions_by_name["insert_line"].trigger()
    editor = window.transcript_view.row_delegate.editor
    assert window.model.rowCount() == rows + 1 and editor is not None
    qtbot.keyClicks(editor, "Someone coughs.")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    new = window.model.utterance(6)
    assert (new.text, new.speaker, new.start) == ("Someone coughs.", u.speaker, u.end)
    window.actions_by_name["undo"].trigger()
    window.actions_by_name["undo"].trigger()
    assert window.model.rowCount() == rows


def test_find_marks_every_match_and_walks_them_forward_and_back(window, qtbot):
    texts = [u.text for u in window.model.utterances]
    expected = sum(t.lower().count("the") for t in texts)
    window.actions_by_name["find"].trigger()
    qtbot.keyClicks(window.find_bar.find_edit, "the")
    assert window.find_bar.count.text() == f"{expected} found"
    assert window.transcript_view.row_delegate.pattern.pattern == "the"
    window.actions_by_name["find_next"].trigger()
    first = window.find_bar.current
    assert window.find_bar.count.text() == f"1 of {expected}"
    assert window.transcript_view.row_delegate.current == (first.row, first.start)
    window.actions_by_name["find_next"].trigger()
    window.actions_by_name["find_previous"].trigger()
    assert window.find_bar.current == first
    pixels = window.transcript_view.viewport().grab().toImage()
    marked = {pixels.pixelColor(x, y).name() for x in range(0, pixels.width(), 2)
              for y in range(0, pixels.height(), 2)}  # fmt: skip
    assert "#ffe066" in marked and "#ff9f43" in marked, "matches are marked in the table"


def test_go_to_a_time_selects_the_line_there_and_moves_the_playhead(window, qtbot):
    u = window.model.utterance(12)
    t = (u.start + u.end) / 2
    answer_next_input(f"0:{int(t) // 60:02d}:{t % 60:04.1f}")
    window.actions_by_name["go_to_time"].trigger()
    assert window.transcript_view.current_source_row() == 12
    assert window.playback.position == pytest.approx(round(t, 1), abs=0.06)


def test_shifting_every_time_moves_lines_and_words_and_refuses_negative_times(window, qtbot):
    before = window.model.utterances
    answer_next_input("-0.25")
    window.actions_by_name["shift_times"].trigger()
    after = window.model.utterances
    assert [u.start for u in after] == pytest.approx([u.start - 0.25 for u in before])
    assert after[3].words[0].start == pytest.approx(before[3].words[0].start - 0.25)
    assert window.undo_stack.undoText() == "Shift all times by -0.25 s"
    answer_next_input("-1:00")
    window.actions_by_name["shift_times"].trigger()
    assert window.model.utterances == after and "cannot move" in window.statusBar().currentMessage()
    window.actions_by_name["undo"].trigger()
    assert window.model.utterances == before


def test_consecutive_lines_of_one_speaker_merge_in_one_step(window, qtbot):
    speaker = window.model.utterance(4).speaker
    commands.set_speaker(window.model, [5, 6], speaker)
    before = window.model.utterances
    window.transcript_view.select_row(0)
    window.actions_by_name["merge_same"].trigger()
    after = window.model.utterances
    assert len(after) < len(before)
    assert all(a.speaker != b.speaker for a, b in itertools.pairwise(after))
    assert after[4].text == " ".join(u.text for u in before[4:7]) and after[4].end == before[6].end
    assert window.undo_stack.undoText() == "Merge lines of the same speaker"
    window.actions_by_name["undo"].trigger()
    assert window.model.utterances == before


def test_the_new_tools_are_in_the_edit_menu_with_their_shortcuts(window):
    edit = next(m for m in window.menuBar().actions() if m.text() == "&Edit").menu()
    shown = {a.objectName(): a.shortcut().toString() for a in edit.actions()}
    assert shown["delete_lines"] == "Del" and shown["insert_line"] == "Ctrl+Shift+I"
    assert shown["go_to_time"] == "Ctrl+G" and shown["shift_times"] == "Ctrl+Shift+T"
    assert shown["merge_same"] == "Ctrl+Shift+J"
