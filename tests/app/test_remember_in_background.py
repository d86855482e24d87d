"""Remember This Voice… embeds off the GUI thread, by real clicks on the demo recording with the real
speaker encoder and a real library file: the window answers while the voice is embedded and
stored, the result goes to the speaker that was asked about, a failure is one clear message, and
closing the window meanwhile still stores the voice.

To hold a job at a known point without touching the code under test, the test keeps the library
file locked the way another program would (an exclusive SQLite transaction): storing waits for
the lock, so everything the test does before it lets go happens while the job is running."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication
from qt_helpers import (
    DEMO,
    answer_next_input,
    choose,
    click_cell,
    names,
    open_demo,
    open_menu,
    right_click,
    show_transcript,
    wait_until,
)

from app.transcript_model import TEXT
from engine.types import Speaker, Transcript, Utterance
from engine.voices import EmbeddingModel, VoiceLibrary, VoiceSample, library_path

LINES = (  # the demo's own turns: S2 is the voice that says "I'll take notes" and "I met a few people"
    Utterance(0.7, 3.5, "I'd like to keep this meeting short.", "S1"),
    Utterance(4.7, 7.8, "I'll take notes.", "S2"),
    Utterance(30.8, 39.9, "I met a few people.", "S2"),
    Utterance(40.5, 41.4, "Sure.", "S3"),
)
SPEAKERS = (Speaker("S1", "Speaker 1"), Speaker("S2", "Speaker 2"), Speaker("S3", "Speaker 3"))
GE2E = EmbeddingModel("resemblyzer-ge2e", "1", 256)


@pytest.fixture
def library(tmp_path, monkeypatch) -> VoiceLibrary:
    """The user's library in a temporary data folder, already holding someone else's voice."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    library = VoiceLibrary(library_path(None))
    library.add("Zed", [VoiceSample(np.ones(256, np.float32), GE2E, "other.flac", 0.0, 20.0)])
    return library


@pytest.fixture
def window(make_window, library):
    window = make_window()
    open_demo(window)
    show_transcript(window, Transcript(LINES, SPEAKERS, 124.0, source=str(DEMO)))
    window.undo_stack.clear()
    return window


class Lock:
    """The library file held in an exclusive transaction, as another program writing it would."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("BEGIN EXCLUSIVE")

    def release(self) -> None:
        self.db.execute("COMMIT")
        self.db.close()


def remember_from_cell(window, row: int, name: str) -> None:
    answer_next_input(name)
    right_click(window, row)
    choose(open_menu(), "Remember This Voice…")


def message(window) -> str:
    return window.statusBar().currentMessage()


def test_the_window_answers_while_a_voice_is_remembered_and_the_result_names_the_speaker_asked_about(
    window, library
):
    lock = Lock(library.path)
    try:
        remember_from_cell(window, 1, "Carol")
        # back in the event loop at once: no wait cursor, the job still running
        # (catches: the embedding run on the GUI thread — it would still hold the window here)
        assert window.voices.busy and message(window).startswith("Remembering Carol's voice")
        assert QApplication.overrideCursor() is None
        view = window.transcript_view
        click_cell(window, 0, TEXT)
        window.speaker_panel.list.setCurrentItem(window.speaker_panel.item_for("S3"))
        assert view.current_source_row() == 0  # the click was handled while the voice was embedded
        assert window.voices.busy
    finally:
        lock.release()
    wait_until(lambda: not window.voices.busy, timeout=120)
    # catches: the result applied to the speaker selected now (S1's line, S3 in the panel)
    assert names(window) == {"S1": "Speaker 1", "S2": "Carol", "S3": "Speaker 3"}
    assert message(window).startswith("Remembered Carol's voice (")
    carol = library.voice("Carol")
    assert carol.samples and all(4.7 <= s.start < s.end <= 39.9 for s in carol.samples)
    window.undo_stack.undo()  # the naming is one undoable step; the voice stays remembered
    assert names(window)["S2"] == "Speaker 2" and library.voice("Carol").samples


def test_a_speaker_renamed_while_its_voice_is_embedded_keeps_the_new_name(window, library):
    # catches: the stored voice's name forced on a speaker the user renamed in the meantime
    lock = Lock(library.path)
    try:
        remember_from_cell(window, 1, "Carol")
        answer_next_input("Caroline")
        right_click(window, 2)
        choose(open_menu(), "Rename Speaker…")
        wait_until(lambda: names(window)["S2"] == "Caroline", timeout=5)
    finally:
        lock.release()
    wait_until(lambda: not window.voices.busy, timeout=120)
    assert names(window)["S2"] == "Caroline" and library.voice("Carol").samples


def test_too_little_speech_is_one_clear_message_and_nothing_is_stored(window, library):
    # catches: a failure on the worker thread swallowed (the job never ends) or reported as success
    remember_from_cell(window, 3, "Dave")  # S3 says "Sure." for 0.9 s
    wait_until(lambda: not window.voices.busy, timeout=120)
    assert message(window).startswith("Not remembered: only 0.9 s of this voice, too little")
    assert {v.name for v in library.voices()} == {"Zed"} and names(window)["S3"] == "Speaker 3"


def test_closing_the_window_while_a_voice_is_embedded_stores_it_and_does_not_crash(window, library):
    # catches: the job dropped when the window closes (a thread pool shut down without waiting)
    lock = Lock(library.path)
    remember_from_cell(window, 1, "Carol")
    assert window.voices.busy
    letting_go = threading.Timer(1.0, lock.release)  # another program finishing its write
    letting_go.start()
    window.close()
    letting_go.join()
    assert library.voice("Carol").samples
    QApplication.processEvents()  # the job's late result reaches a closed window: nothing happens


def test_a_transcript_shown_while_a_voice_is_embedded_keeps_its_speakers_names(window, library):
    # catches: the name given to whoever has the speaker's id in the transcript shown by then
    # (a finished run or another file: its "Speaker 2" is someone else)
    lock = Lock(library.path)
    try:
        remember_from_cell(window, 1, "Carol")
        show_transcript(window, Transcript(LINES[:2], SPEAKERS[:2], 124.0, source=str(DEMO)))
    finally:
        lock.release()
    wait_until(lambda: not window.voices.busy, timeout=120)
    assert names(window) == {"S1": "Speaker 1", "S2": "Speaker 2"} and library.voice("Carol").samples
