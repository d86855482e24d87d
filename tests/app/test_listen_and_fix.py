"""The review loop a user runs on a long recording: listen while reading and fix what is wrong.

Playback reads cost the same at any length; typing while the playhead moves keeps every
character; editing a line that overlaps another neither recurses nor loses the edit."""

from __future__ import annotations

import tracemalloc

import numpy as np
from PySide6.QtCore import Qt, QTimer, QUrl
from qt_helpers import show_transcript

from app.playback import PlaybackSource
from app.transcript_model import TEXT
from engine.types import Transcript, Utterance, Word

QUARTER_HOUR = 900 * 16_000


def test_reading_32_ms_of_a_long_recording_touches_only_those_samples():
    samples = np.zeros(QUARTER_HOUR, np.float32)  # never written: costs no memory until read
    samples[QUARTER_HOUR // 2 : QUARTER_HOUR // 2 + 600] = 0.5
    head = PlaybackSource(samples, 16_000, start=450.0)
    tracemalloc.start()
    out = head.read(512)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 100_000, f"one audio callback allocated {peak / 1e6:.1f} MB"
    np.testing.assert_array_equal(out, np.full(512, 0.5, np.float32))
    assert head.position == 450.0 + 512 / 16_000


def _press_f2_on(window, qtbot, row: int):
    view = window.transcript_view
    view.select_row(row)
    qtbot.keyClick(view, Qt.Key.Key_F2)
    editor = view.row_delegate.editor
    assert editor is not None and editor.hasFocus()
    return editor


def test_opening_a_line_seeks_once_to_its_last_word(demo_window, qtbot):
    # catches: the fresh editor reporting its caret at the start of the text and then at the end
    # (two seeks, the word view drawn twice, on every F2)
    window, view = demo_window, demo_window.transcript_view
    view.select_row(2)  # (selecting it seeks to its start)
    heard: list[float] = []
    window.playback.position_changed.connect(heard.append)
    qtbot.keyClick(view, Qt.Key.Key_F2)
    assert view.row_delegate.editor is not None
    assert heard == [window.model.utterance(2).words[-1].start]


def test_typing_while_the_playhead_moves_across_lines_keeps_every_character(demo_window, qtbot):
    window = demo_window
    first, second = window.model.utterance(2), window.model.utterance(3)
    editor = _press_f2_on(window, qtbot, 2)
    ticks = iter(np.arange(first.end - 0.6, second.end, 0.1))  # the playhead crosses into line 3
    timer = QTimer(window, interval=20)
    timer.timeout.connect(lambda: window.playback.seek(float(next(ticks, second.end))))
    timer.start()
    for chunk in (" and", " nothing", " TYPED"):
        qtbot.keyClicks(editor, chunk)
        qtbot.wait(60)
    qtbot.waitUntil(lambda: window.model.current_row == 3, timeout=3000)
    timer.stop()
    assert window.transcript_view.row_delegate.editor is editor, "playback closed the editor"
    assert editor.toPlainText() == first.text + " and nothing TYPED"
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert window.model.utterance(2).text == first.text + " and nothing TYPED"
    assert window.model.utterance(3) == second


def _overlapping() -> Transcript:
    def line(start: float, words: str, speaker: str) -> Utterance:
        ws = tuple(Word(start + 0.4 * i, start + 0.4 * i + 0.35, w) for i, w in enumerate(words.split()))
        return Utterance(start, ws[-1].end, words, speaker, ws)

    a = line(18.7, "but we still need the hotel booked", "S1")
    b = line(20.0, "who is going to make the final decision", "S2")
    return Transcript(utterances=(a, b), duration=124.48)


def test_replacing_all_text_of_a_line_that_overlaps_another_commits_once(demo_window, qtbot):
    window = demo_window
    show_transcript(window, _overlapping())
    assert window.model.utterance(0).end > window.model.utterance(1).start
    editor = _press_f2_on(window, qtbot, 0)
    qtbot.keyClick(editor, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    for _ in range(3):  # the caret walks over words that overlap the other line
        qtbot.keyClick(editor, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    qtbot.keyClicks(editor, "but the hotel is booked")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert window.model.utterance(0).text == "but the hotel is booked"
    assert window.model.utterance(1).text == "who is going to make the final decision"
    assert window.undo_stack.undoText() == "Edit text"
    assert window.last_dialog is None
    index = window.transcript_view.filter.mapFromSource(window.model.index(0, TEXT))
    assert index.data() == "but the hotel is booked"


def test_the_word_being_heard_is_highlighted_in_the_word_view(demo_window, qtbot):
    window = demo_window
    window.transcript_view.select_row(2)
    u = window.model.utterance(2)
    third = u.words[2]
    window.playback.seek((third.start + third.end) / 2)
    assert window.word_view.lit == 2
    assert "font-weight:600" in window.word_view.toHtml() or "font-weight:700" in window.word_view.toHtml()
    window.playback.seek(u.end + 5)
    assert window.word_view.lit is None


def test_an_edited_line_keeps_its_word_timings_in_the_word_view(demo_window, qtbot):
    window = demo_window
    u = window.model.utterance(4)
    editor = _press_f2_on(window, qtbot, 4)
    qtbot.keyClick(editor, Qt.Key.Key_Backspace)  # the final "." becomes "!"
    qtbot.keyClicks(editor, "!")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    edited = window.model.utterance(4)
    assert edited.text == u.text[:-1] + "!"
    assert [(w.start, w.end) for w in edited.words] == [(w.start, w.end) for w in u.words]
    window.transcript_view.select_row(3)
    window.transcript_view.select_row(4)
    assert "no word timings" not in window.word_view.toPlainText()
    window.word_view.anchorClicked.emit(QUrl("w:2"))
    assert window.playback.position == u.words[2].start
