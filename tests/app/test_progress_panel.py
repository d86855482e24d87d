"""Staged progress in words, with elapsed time, an estimate of what is left, and Cancel."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.resources import style_sheet
from app.widgets.progress_panel import ProgressPanel, describe, overall
from engine.types import Progress, Stage

CANCELLING = "Cancelling… the chunks being decoded finish first; finished work is kept"


def test_stages_read_as_sentences_with_their_units():
    assert describe(Progress(Stage.LOAD, 90, 3600)) == "Decoding audio — 1:30 of 1:00:00"
    assert describe(Progress(Stage.INFER, 0, 12, "loading faster-whisper tiny.en")) == (
        "Transcribing — chunk 0 of 12 (loading faster-whisper tiny.en)"
    )
    assert describe(Progress(Stage.INFER, 3, 12)) == "Transcribing — chunk 3 of 12"
    assert describe(Progress(Stage.STITCH, 1, 1)) == "Assembling the transcript"


def test_the_panel_shows_overall_percent_an_honest_estimate_and_cancels_once(qtbot):
    now = [0.0]
    panel = ProgressPanel(clock=lambda: now[0])
    qtbot.addWidget(panel)
    panel.start("Starting transcription", "transcribe")
    assert not panel.isHidden()
    panel.update_progress(Progress(Stage.INFER, 0, 10, "loading the model"))
    assert panel.eta.text() == "0:00 elapsed, estimating the time left"  # no guess from nothing
    for done in (2, 4):
        now[0] = done * 5.0
        panel.update_progress(Progress(Stage.INFER, done, 10))
    assert panel.bar.value() == round(overall("transcribe", Progress(Stage.INFER, 4, 10)) * 1000)
    assert panel.eta.text() == "0:20 elapsed, under a minute left"
    now[0] = 600.0
    panel.update_progress(Progress(Stage.INFER, 5, 10))
    assert panel.eta.text().endswith("left") and "about" in panel.eta.text()
    with qtbot.waitSignal(panel.cancel_requested):
        panel.cancel.click()
    assert not panel.cancel.isEnabled() and panel.cancel.text() == "Cancelling…"
    panel.finish()
    assert panel.isHidden()


def test_the_bar_never_goes_back_when_a_stage_starts_at_zero(qtbot):
    panel = ProgressPanel(clock=lambda: 0.0)
    qtbot.addWidget(panel)
    panel.start("Starting transcription", "transcribe")
    seen = []
    for p in (Progress(Stage.INFER, 10, 10), Progress(Stage.SPEAKERS, 0, 5), Progress(Stage.SPEAKERS, 5, 5),
              Progress(Stage.LOAD, 0, 100), Progress(Stage.STITCH, 1, 1)):  # fmt: skip
        panel.update_progress(p)
        seen.append(panel.bar.value())
    assert seen == sorted(seen) and seen[-1] == 1000
    assert seen[1] > 800  # "Identifying speakers" starts where transcribing ended, not at 0 %


def test_a_load_job_fills_the_whole_bar():
    assert overall("load", Progress(Stage.CHUNK, 1, 1)) == 1.0
    assert overall("load", Progress(Stage.LOAD, 1, 2)) == 0.25


def test_stages_without_units_to_count_read_as_plain_words():
    assert describe(Progress(Stage.LOAD, 0, 0)) == "Decoding audio"  # a length not known yet
    assert describe(Progress(Stage.VAD, 1, 1)) == "Finding speech — 0:01 of 0:01"
    assert describe(Progress(Stage.INFER, 0, 0)) == "Transcribing"
    assert describe(Progress(Stage.INFER, 1, 1)) == "Transcribing — chunk 1 of 1"
    assert describe(Progress(Stage.INFER, 0, 12)) == "Transcribing — chunk 0 of 12"  # no empty "()"
    assert describe(Progress(Stage.INFER, 3, 12, "loading")) == "Transcribing — chunk 3 of 12"
    assert describe(Progress(Stage.SPEAKERS, 1, 3, "2 voices")) == "Identifying speakers — 2 voices"


def started(qtbot, now: list[float], kind: str = "transcribe") -> ProgressPanel:
    panel = ProgressPanel(clock=lambda: now[0])
    qtbot.addWidget(panel)
    panel.start("Opening the file", kind)
    return panel


def test_the_estimate_waits_for_three_seconds_of_measurable_progress_then_says_what_is_left(qtbot):
    now = [100.0]
    panel = started(qtbot, now, "load")
    shown = []
    for t, done, total in ((105, 0, 2), (110, 1, 2), (111, 3, 4), (113, 3, 4), (140, 2, 2)):
        now[0] = t
        panel.update_progress(Progress(Stage.LOAD, done, total))
        shown.append(panel.eta.text())
    assert shown == [
        "0:05 elapsed, estimating the time left",  # nothing done yet: no rate to measure from
        "0:10 elapsed, estimating the time left",  # the rate is measured from here (25 %)
        "0:11 elapsed, estimating the time left",  # 12.5 % more, but in 1 s
        "0:13 elapsed, under a minute left",  # 3 s: 62.5 % left at 12.5 % per 3 s = 15 s
        "0:40 elapsed, about 1:00 left",  # 25 % in 30 s, 50 % left: exactly a minute
    ]


def test_an_estimate_starts_once_two_percent_is_done(qtbot):
    now = [0.0]
    panel = started(qtbot, now, "load")
    panel.update_progress(Progress(Stage.LOAD, 2, 50))  # 2 %
    now[0] = 10.0
    panel.update_progress(Progress(Stage.LOAD, 3, 50))  # 1 % in 10 s: too little to go on
    assert panel.eta.text() == "0:10 elapsed, estimating the time left"
    panel.update_progress(Progress(Stage.LOAD, 4, 50))  # 2 % in 10 s, 96 % left
    assert panel.eta.text() == "0:10 elapsed, about 8:00 left"
    assert panel.label.toolTip() == "Decoding audio — 0:04 of 0:50"


def test_each_kind_of_job_fills_the_bar_by_its_own_stages(qtbot):
    now = [0.0]
    load = started(qtbot, now, "load")
    load.update_progress(Progress(Stage.LOAD, 1, 2))
    assert load.bar.value() == 250  # half of the decoding, which is half of opening a file
    load.update_progress(Progress(Stage.INFER, 0, 5))  # not a stage of opening a file
    assert load.bar.value() == 250
    other = started(qtbot, now, "retranscribe range")  # a kind without its own shares: a transcription's
    other.update_progress(Progress(Stage.SPEAKERS, 1, 2))
    assert other.bar.value() == round(overall("transcribe", Progress(Stage.SPEAKERS, 1, 2)) * 1000) == 915
    half = Progress(Stage.INFER, 1, 2)
    assert overall("retranscribe range", half) == overall("transcribe", half)
    assert overall("load", Progress(Stage.INFER, 1, 2)) == 0.0


def test_the_bar_reads_whole_percent_from_0_to_100_and_a_new_job_starts_at_0(qtbot):
    now = [0.0]
    panel = started(qtbot, now)
    assert (panel.bar.value(), panel.bar.text()) == (0, "0 %")
    panel.update_progress(Progress(Stage.INFER, 1, 2))  # 7 % + 39 %
    assert panel.bar.text() == "46 %"
    panel.update_progress(Progress(Stage.STITCH, 1, 1))
    assert (panel.bar.value(), panel.bar.text()) == (1000, "100 %")
    panel.finish()
    panel.start("Opening the file", "load")
    assert (panel.bar.value(), panel.bar.text(), panel.eta.text()) == (0, "0 %", "")
    assert panel.label.text() == panel.label.toolTip() == "Opening the file"


def test_cancel_is_heard_once_says_what_happens_and_the_next_job_can_be_cancelled_again(qtbot):
    now = [0.0]
    panel = started(qtbot, now)
    panel.update_progress(Progress(Stage.INFER, 5, 10))
    asked: list[bool] = []
    panel.cancel_requested.connect(lambda: asked.append(True))
    panel.show()
    QTest.mouseClick(panel.cancel, Qt.MouseButton.LeftButton)
    QTest.mouseClick(panel.cancel, Qt.MouseButton.LeftButton)  # a second click: the button is off
    assert asked == [True]
    assert (panel.cancel.isEnabled(), panel.cancel.text(), panel.eta.text()) == (False, "Cancelling…", "")
    assert panel.label.toolTip() == panel.label.accessibleDescription() == CANCELLING
    panel.finish()
    panel.start("Starting transcription")
    assert (panel.cancel.isEnabled(), panel.cancel.text()) == (True, "Cancel")


def test_a_screen_reader_names_each_part_of_the_panel_and_reads_the_whole_stage(qtbot):
    now = [0.0]
    panel = started(qtbot, now)
    panel.update_progress(Progress(Stage.INFER, 3, 12, "tiny.en"))
    names = [w.accessibleName() for w in (panel.label, panel.bar, panel.eta, panel.cancel)]
    assert names == ["Progress", "Overall progress", "Time left", "Cancel the running job"]
    assert panel.label.accessibleDescription() == panel.label.toolTip() == "Transcribing — chunk 3 of 12"
    assert panel.cancel.toolTip() == "Stop the running job (Esc)"


def test_the_panel_lies_in_its_window_with_the_stage_words_widest_on_the_themes_background(qtbot):
    window = QWidget()
    qtbot.addWidget(window)
    window.setStyleSheet(style_sheet())
    panel = ProgressPanel(window)
    assert panel.parent() is window  # a child of the window before any layout takes it
    QVBoxLayout(window).addWidget(panel)
    panel.start("Starting transcription")
    window.resize(840, 60)
    window.show()
    qtbot.waitExposed(window)
    assert panel.label.window() is window
    inner = panel.contentsRect().adjusted(8, 4, -8, -4)  # the panel's own margins
    assert panel.label.geometry().topLeft() == inner.topLeft()
    assert panel.label.geometry().bottom() == inner.bottom()
    assert panel.cancel.geometry().right() == inner.right()
    label, bar, eta = panel.label.width(), panel.bar.width(), panel.eta.width()
    assert abs(label / bar - 1.5) < 0.05 and abs(eta - bar) <= 1  # shares 3 : 2 : 2
    assert QColor(panel.grab().toImage().pixel(4, panel.height() // 2)).name() == "#eaf1f8"


def test_a_narrow_window_keeps_the_stage_words_and_the_bar_120_pixels_wide(qtbot):
    now = [0.0]
    panel = started(qtbot, now)
    panel.resize(200, 40)
    panel.show()
    qtbot.waitExposed(panel)
    assert (panel.label.width(), panel.bar.width()) == (120, 120)
