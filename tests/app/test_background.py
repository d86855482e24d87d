"""Threads of the window's process that work in bursts while the user edits run below the window
(`app.background.step_back`): the project's writer, the loaders of a spelling dictionary and of
known voices. (The engine's worker, a recording's closer and the watch folder's handler are
checked beside the rest of their behaviour.)"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from qt_helpers import LINUX, make_store, stepped_back, thread_niceness, wait_until

pytestmark = pytest.mark.skipif(not LINUX, reason="a niceness per thread is Linux's")


def test_a_project_is_written_below_the_window(qapp) -> None:
    # catches: a save (the whole document serialised) competing with the window for a core
    from app.project_writer import ProjectWriter

    writer, seen = ProjectWriter(), []
    writer.submit(lambda: seen.append(thread_niceness()))
    writer.shutdown()
    assert seen == [stepped_back()] and thread_niceness() == os.getpriority(os.PRIO_PROCESS, os.getpid())


def test_a_spelling_dictionary_is_read_below_the_window(qapp, tmp_path: Path, monkeypatch) -> None:
    # catches: the first transcript's dictionary (seconds of parsing) read at the window's priority
    from app.spelling import Speller
    from app.widgets.spell_check import SpellCheck

    seen: list[int] = []
    spy = classmethod(lambda cls, language, words=(): seen.append(thread_niceness()))
    monkeypatch.setattr(Speller, "load", spy)
    check = SpellCheck(make_store(tmp_path))
    check.want("en")
    wait_until(lambda: not check.loading, timeout=30)
    assert seen == [stepped_back()]


def test_a_voice_is_remembered_below_the_window(qapp, monkeypatch) -> None:
    # catches: the speaker encoder run over a speaker's audio at the window's priority
    import app.voice_jobs as voice_jobs
    from engine.types import Recording, Transcript

    seen: list[int] = []
    monkeypatch.setattr(voice_jobs, "remember", lambda *args: seen.append(thread_niceness()) or 1)
    jobs = voice_jobs.VoiceJobs()
    recording = Recording(np.zeros(16000, np.float32), 16000)
    jobs.submit(voice_jobs.RememberRequest("S1", "Speaker 1", "Ada", Transcript(()), recording, None))
    jobs.shutdown()
    assert seen == [stepped_back()]
