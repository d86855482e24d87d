"""The app's watch folder: a recording dropped into the chosen folder is transcribed in the
background once, a broken one is skipped with a message, and the choice survives a restart."""

from __future__ import annotations

import soundfile as sf
from qt_helpers import DEMO, LINUX, make_store, stepped_back, thread_niceness, wait_until

from app.settings import TranscribeSettings


def test_dropped_recordings_are_transcribed_once_and_the_choice_is_remembered(make_window, qtbot, tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    store = make_store(tmp_path)
    w = make_window(store=store)
    messages: list[str] = []
    w.statusBar().messageChanged.connect(lambda m: m and messages.append(m))
    w.set_settings(TranscribeSettings(diarizer="none"))
    niceness, pipeline = [], w.recording.watch.pipeline
    w.recording.watch.pipeline = lambda: niceness.append(thread_niceness()) or pipeline()
    w.recording.watch.start(inbox, settle_seconds=0.5)
    assert w.actions_by_name["watch"].isChecked()
    samples, rate = sf.read(DEMO, dtype="float32", stop=16000 * 4)
    sf.write(inbox / "call.wav", samples, rate)
    (inbox / "broken.mp3").write_bytes(b"not audio at all" * 50)
    out = inbox / "Transcripts"
    wait_until(lambda: (out / "call.txt").exists() and any("skipped broken.mp3" in m for m in messages),
               timeout=120)  # fmt: skip
    assert "meeting" in (out / "call.txt").read_text().lower()
    # catches: the watch folder decoding in the window's process again (nothing else started the engine)
    assert w.session.runner.worker.engine.running()
    wait_until(lambda: any("transcribed call.wav" in m for m in messages), timeout=10)
    # catches: a file handled by a thread at the window's priority (its decoding takes a core)
    if LINUX:
        assert niceness and set(niceness) == {stepped_back()}

    w.recording.watch.shutdown()
    again = make_window(store=store)  # a restart: still watching, nothing transcribed twice
    assert again.recording.watch.active and again.recording.watch.folder == inbox
    mtime = (out / "call.txt").stat().st_mtime
    count = len(messages)
    again.statusBar().messageChanged.connect(lambda m: m and messages.append(m))
    qtbot.wait(3500)  # several polls past the settle time
    assert len(messages) == count and (out / "call.txt").stat().st_mtime == mtime
