"""Editing the demo transcript in the window, as a user does it: select, type, split, merge,
speakers, find and replace, filter, undo and redo — with the waveform following along."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QLineEdit

from app import commands
from app import speakers as sp
from app.timeline import format_time
from app.transcript_model import SPEAKER, TEXT, CurrentRole


@pytest.fixture
def window(demo_window):
    return demo_window


def test_selecting_a_line_shows_it_on_the_waveform_and_a_click_selects_back(window, qtbot):
    u = window.model.utterance(10)
    window.waveform.show_range(0, 5)
    window.transcript_view.select_row(10)
    assert list(window.waveform.selection.starts) == [u.start]
    x0, x1 = window.waveform.visible_range()
    assert x0 <= u.start and u.end <= x1
    other = window.model.utterance(3)
    window.waveform.show_range(0, 60)
    point = window.waveform.mapFromScene(
        window.waveform.vb.mapViewToScene(QPointF((other.start + other.end) / 2, 0))
    )
    qtbot.mouseClick(window.waveform.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert window.transcript_view.current_source_row() == 3
    assert window.playback.position == pytest.approx((other.start + other.end) / 2, abs=0.3)


def _open_editor(window, row: int) -> QLineEdit:
    view = window.transcript_view
    view.select_row(row)
    view.edit(view.filter.mapFromSource(window.model.index(row, TEXT)))
    editor = view.row_delegate.editor
    assert editor is not None
    return editor


def test_typing_in_place_then_undo_and_redo_from_the_menu(window, qtbot):
    editor = _open_editor(window, 0)
    editor.selectAll()
    qtbot.keyClicks(editor, "Let us keep this short.")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.transcript_view.row_delegate.editor is None)
    assert window.model.utterance(0).text == "Let us keep this short."
    assert window.isWindowModified()
    window.actions_by_name["undo"].trigger()
    assert window.model.utterance(0).text.startswith("I'd like to keep this meeting short")
    window.actions_by_name["redo"].trigger()
    assert window.model.utterance(0).text == "Let us keep this short."


def test_split_at_the_text_cursor_then_merge_back(window):
    text = window.model.utterance(2).text
    rows = window.model.rowCount()
    editor = _open_editor(window, 2)
    cut = text.index(" ", len(text) // 2)
    editor.setCursorPosition(cut)
    window.actions_by_name["split"].trigger()
    assert window.model.rowCount() == rows + 1
    left, right = window.model.utterance(2), window.model.utterance(3)
    assert left.text == text[:cut].strip() and right.text == text[cut:].strip()
    assert left.end == right.start and left.words and right.words
    window.transcript_view.select_row(2)
    window.actions_by_name["merge"].trigger()
    assert window.model.rowCount() == rows and window.model.utterance(2).text == text


def two_speakers(window) -> tuple[str, str]:
    """The first two speakers of the transcript; made and assigned (alternating lines) if missing."""
    while len(window.model.book) < 2:
        commands.add_speaker(window.model)
    a, b = window.model.book[0].id, window.model.book[1].id
    if not any(u.speaker == b for u in window.model.utterances):
        commands.set_speaker(window.model, range(0, window.model.rowCount(), 2), a)
        commands.set_speaker(window.model, range(1, window.model.rowCount(), 2), b)
    return a, b


def test_speakers_named_once_show_everywhere(window):
    panel = window.speaker_panel
    alice, bob = two_speakers(window)
    row = next(r for r, u in enumerate(window.model.utterances) if u.speaker == alice)
    panel.item_for(alice).setText("Alice Moreau")
    assert window.model.data(window.model.index(row, SPEAKER)) == "Alice Moreau"
    assert next(lane.name for lane, _ in window.waveform.lanes.lanes) == "Alice Moreau"
    assert window.find_bar.speaker_filter.findText("Alice Moreau") >= 0
    assert window.actions_by_name["speaker_1"].text() == "Assign to Alice Moreau"
    panel.item_for(bob).setText("Alice Moreau")
    assert "already" in window.statusBar().currentMessage()
    speakers = panel.list.count()
    commands.merge_speakers(window.model, [bob], alice)
    assert bob not in {u.speaker for u in window.model.utterances}
    assert panel.list.count() == speakers - 1
    window.actions_by_name["undo"].trigger()
    assert panel.list.count() == speakers


def test_filter_by_speaker_shows_only_their_lines(window):
    alice = window.edit.new_speaker()
    commands.set_speaker(window.model, [1, 4, 7], alice.id)
    window.find_bar.set_speaker_filter(alice.id)
    view = window.transcript_view
    assert view.model().rowCount() == 3
    assert [view.source_row(r) for r in range(3)] == [1, 4, 7]
    window.find_bar.set_speaker_filter(None)
    unassigned = sum(u.speaker is None for u in window.model.utterances)
    assert view.model().rowCount() == unassigned


def test_find_next_and_replace_all(window, qtbot):
    bar = window.find_bar
    window.actions_by_name["find"].trigger()
    qtbot.keyClicks(bar.find_edit, "meeting")
    qtbot.keyClick(bar.find_edit, Qt.Key.Key_Return)
    row = window.transcript_view.current_source_row()
    assert "meeting" in window.model.utterance(row).text.lower()
    assert bar.count.text().startswith("1 of")
    total = int(bar.count.text().split()[-1])
    bar.replace_edit.setText("session")
    bar.replace_every()
    assert "meeting" not in " ".join(u.text.lower() for u in window.model.utterances)
    assert f"Replaced {total}" in window.statusBar().currentMessage()
    window.undo_stack.undo()
    assert "meeting" in window.model.utterance(row).text.lower()


def test_regex_and_whole_word_find_with_real_keys_then_replace_with_groups(window, qtbot):
    bar = window.find_bar
    window.actions_by_name["find"].trigger()
    texts = [u.text for u in window.model.utterances]
    qtbot.keyClicks(bar.find_edit, "the")
    substring_count = int(bar.count.text().split()[0])
    qtbot.mouseClick(bar.whole, Qt.MouseButton.LeftButton)
    whole = sum(len(re.findall(r"\bthe\b", t, re.IGNORECASE)) for t in texts)
    assert bar.count.text() == f"{whole} found" and whole < substring_count  # "there", "them" no longer count
    bar.find_edit.clear()
    qtbot.mouseClick(bar.regex, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(bar.find_edit, "(")
    assert bar.count.text().startswith("not a valid pattern")
    qtbot.keyClick(bar.find_edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(bar.find_edit, r"(\w+)ing")
    qtbot.keyClick(bar.find_edit, Qt.Key.Key_Return)
    row = window.transcript_view.current_source_row()
    before = window.model.utterance(row).text
    bar.replace_edit.setText(r"<\1>")
    bar.replace_one()
    after = window.model.utterance(row).text
    word = re.search(r"\b(\w+)ing\b", before).group(1)
    assert f"<{word}>" in after and after != before


def test_nudging_a_boundary_is_undoable(window):
    window.transcript_view.select_row(5)
    start = window.model.utterance(5).start
    window.actions_by_name["start_later"].trigger()
    assert window.model.utterance(5).start == pytest.approx(start + 0.1)
    window.actions_by_name["undo"].trigger()
    assert window.model.utterance(5).start == start


def test_the_utterance_under_the_playhead_is_highlighted_and_speed_steps(window):
    u = window.model.utterance(4)
    window.playback.seek((u.start + u.end) / 2)
    assert window.model.current_row == 4
    assert window.model.data(window.model.index(4, TEXT), CurrentRole)
    assert window.position_label.text() == format_time((u.start + u.end) / 2)
    assert window.waveform.playhead.value() == pytest.approx((u.start + u.end) / 2)
    if window.playback.reason is None:
        window.actions_by_name["faster"].trigger()
        assert window.speed_box.currentData() == 1.25


def test_the_speaker_column_offers_every_speaker_in_a_list(window, qtbot):
    bob = commands.add_speaker(window.model, "Bob")
    view = window.transcript_view
    index = view.filter.mapFromSource(window.model.index(2, SPEAKER))
    view.setCurrentIndex(index)
    view.edit(index)
    combo = view.indexWidget(index) or view.focusWidget()
    items = [combo.itemText(i) for i in range(combo.count())]
    assert items == [sp.UNASSIGNED_NAME, *(s.name for s in window.model.book)] and items[-1] == "Bob"
    combo.setCurrentIndex(len(items) - 1)
    view.commitData(combo)
    assert window.model.utterance(2).speaker == bob.id
