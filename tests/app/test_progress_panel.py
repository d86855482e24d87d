"""Staged progress in words, with elapsed time, an estimate of what is left, and Cancel."""

from __future__ import annotations

from app.widgets.progress_panel import ProgressPanel, describe, overall
from engine.types import Progress, Stage


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
