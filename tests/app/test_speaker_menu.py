"""A speaker's menu on the transcript's speaker cell, by real clicks and keys: a right-click on a
line's speaker, or the context-menu key / Shift+F10 on the selected line, offers what the Speakers
panel offers for that speaker — the recognised name's similarity, Rename Speaker…, Remember This
Voice… and "Not <name>" — and each choice is one undoable step."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from qt_helpers import (
    answer_next_input,
    choose,
    click_cell,
    close_menus,
    entries,
    names,
    open_menu,
    right_click,
    show_transcript,
    wait_until,
)

from app.transcript_model import SPEAKER, TEXT
from engine.types import Speaker, Transcript, Utterance

LINES = (
    Utterance(0.0, 2.0, "Let's start.", "S1"),
    Utterance(2.5, 5.0, "I have the figures.", "S2"),
    Utterance(5.5, 8.0, "Go on then.", "S3"),
    Utterance(8.5, 11.0, "They are up.", "S2"),
    Utterance(11.5, 13.0, "Good.", None),
)
SPEAKERS = (Speaker("S1", "Speaker 1"), Speaker("S2", "Bob", 0.9449), Speaker("S3", "Speaker 3"))


@pytest.fixture
def window(make_window):
    window = make_window()
    show_transcript(window, Transcript(LINES, SPEAKERS, 13.0))
    window.undo_stack.clear()
    return window


def test_right_clicking_a_lines_speaker_offers_that_speakers_menu_with_the_recognised_similarity(window):
    # catches: the menu built for the row above or below (Bob's line sits between two others)
    right_click(window, 1)
    menu = open_menu()
    assert entries(menu) == ["Recognised as Bob (0.94)", "Rename Speaker…", "Remember This Voice…", "Not Bob"]
    assert not menu.actions()[0].isEnabled()  # a fact, not a command
    close_menus()
    right_click(window, 2)
    assert entries(open_menu()) == ["Rename Speaker…", "Remember This Voice…"]  # no recognised name: no "Not"
    close_menus()


def test_with_the_table_filtered_to_one_speaker_the_menu_is_the_shown_lines_speaker(window):
    # catches: the view's row taken for the transcript's row (the filter shows Bob's lines only,
    # so the first row on screen is transcript row 1, and transcript row 0 is Speaker 1's)
    window.transcript_view.filter.set_speaker("S2")
    QApplication.processEvents()
    right_click(window, 1)
    assert entries(open_menu())[-1] == "Not Bob"
    close_menus()


def test_not_bob_on_the_cell_gives_the_speaker_its_label_back_in_one_undoable_step(window):
    # catches: the correction made without pushing it on the undo stack, or on the wrong speaker
    right_click(window, 3)
    choose(open_menu(), "Not Bob")
    assert names(window) == {"S1": "Speaker 1", "S2": "Speaker 2", "S3": "Speaker 3"}
    assert window.undo_stack.count() == 1
    window.undo_stack.undo()
    assert names(window)["S2"] == "Bob" and window.model.book[1].score == pytest.approx(0.9449)


def test_rename_speaker_from_the_cell_renames_everywhere_and_undoes(window):
    # catches: the rename applied to the speaker selected in the panel (as its Colour… and Merge…
    # buttons do) rather than the one whose cell was clicked
    window.speaker_panel.list.setCurrentItem(window.speaker_panel.item_for("S1"))
    answer_next_input("Carol")
    right_click(window, 2)
    choose(open_menu(), "Rename Speaker…")
    wait_until(lambda: names(window)["S3"] == "Carol", timeout=5)
    assert names(window)["S1"] == "Speaker 1"
    assert window.speaker_panel.item_for("S3").text() == "Carol"
    window.undo_stack.undo()
    assert names(window)["S3"] == "Speaker 3"


@pytest.mark.parametrize("key", ["menu", "shift+f10"])
def test_the_menu_key_and_shift_f10_open_the_selected_lines_speaker_menu(window, key):
    # catches: the keyboard menu taken from the cell under the view's centre, not the selected line
    view = window.transcript_view
    click_cell(window, 3, TEXT)
    view.setFocus()
    QApplication.processEvents()
    if key == "menu":
        QTest.keyClick(view, Qt.Key.Key_Menu)
    else:
        QTest.keyClick(view, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    menu = open_menu()
    assert entries(menu)[0] == "Recognised as Bob (0.94)"
    choose(menu, "Not Bob")
    assert names(window)["S2"] == "Speaker 2"


def test_the_speakers_panel_offers_the_same_menu_as_the_cell(window):
    # catches: two menus drifting apart (the panel without Rename, or without the similarity)
    panel = window.speaker_panel
    at = panel.list.visualItemRect(panel.item_for("S2")).center()
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, at, panel.list.viewport().mapToGlobal(at))
    QApplication.sendEvent(panel.list.viewport(), event)
    from_panel = entries(open_menu())
    close_menus()
    right_click(window, 1)
    assert entries(open_menu()) == from_panel
    close_menus()


def test_a_line_without_a_speaker_and_the_text_cell_open_no_speaker_menu(window):
    # catches: a menu for a line with no speaker (its commands would fail) or for any cell
    for row, column in ((4, SPEAKER), (1, TEXT)):
        right_click(window, row, column)
        popup = QApplication.activePopupWidget()
        assert popup is None or "Rename Speaker…" not in entries(popup)  # toolbars' menu: fine
        close_menus()


def test_shift_f10_in_the_speakers_panel_opens_the_current_speakers_menu(window):
    # catches: the panel's keyboard menu taken from the first speaker instead of the current one
    panel = window.speaker_panel
    QTest.keyClick(window, Qt.Key.Key_F8)  # Go to Speakers
    panel.list.setCurrentItem(panel.item_for("S2"))
    QTest.keyClick(panel.list, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    assert entries(open_menu())[-1] == "Not Bob"
    close_menus()
