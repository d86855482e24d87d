"""Staged progress in words, with elapsed time, an estimate of what is left, and Cancel."""

from __future__ import annotations

from app.widgets.progress_panel import ProgressPanel, describe
from engine.types import Progress, Stage


def test_stages_read_as_sentences_with_their_units():
    assert describe(Progress(Stage.LOAD, 90, 3600)) == "Decoding audio — 1:30 of 1:00:00"
    assert describe(Progress(Stage.INFER, 0, 12, "loading faster-whisper tiny.en")) == (
        "Transcribing — chunk 0 of 12 (loading faster-whisper tiny.en)"
    )
    assert describe(Progress(Stage.INFER, 3, 12)) == "Transcribing — chunk 3 of 12"
    assert describe(Progress(Stage.STITCH, 1, 1)) == "Assembling the transcript"


def test_the_panel_shows_percent_and_an_estimate_and_cancels_once(qtbot):
    now = [0.0]
    panel = ProgressPanel(clock=lambda: now[0])
    qtbot.addWidget(panel)
    panel.start("Starting transcription")
    assert panel.isVisible() or not panel.isHidden()
    for done in (0, 2, 4):
        now[0] = done * 5.0
        panel.update_progress(Progress(Stage.INFER, done, 10))
    assert panel.bar.value() == 400
    assert panel.eta.text() == "0:20 elapsed, about 0:30 left"
    with qtbot.waitSignal(panel.cancel_requested):
        panel.cancel.click()
    assert not panel.cancel.isEnabled() and panel.cancel.text() == "Cancelling…"
    panel.finish()
    assert panel.isHidden()
