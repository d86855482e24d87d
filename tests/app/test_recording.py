"""Recording in the window: live lines while it records, the final run after it, an edit kept,
a device that fails mid-recording, and a recording cut short by a kill offered back at start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from qt_helpers import DEMO, LINUX, make_store, stepped_back, thread_niceness, wait_until

from app.timeline import format_time
from engine.live.flac_writer import marker_path
from engine.live.sources import FileSource

ROOT = Path(__file__).resolve().parents[2]


def clip(path: Path, start: float, end: float) -> Path:
    samples, rate = sf.read(DEMO, dtype="float32", start=int(start * 16000), stop=int(end * 16000))
    sf.write(path, samples, rate)
    return path


@pytest.fixture
def recorder_window(make_window, tmp_path: Path):
    store = make_store(tmp_path)
    store.set_value("recordings_folder", str(tmp_path / "recordings"))
    return make_window(store=store)


def test_live_lines_appear_while_recording_and_an_edited_line_survives_the_final_run(
    recorder_window, qtbot, tmp_path: Path
) -> None:
    w = recorder_window
    feature = w.recording
    levels: list[int] = []
    feature.controller.status.connect(lambda s: levels.append(w.recording.panel.meter.value()))
    assert feature.start(FileSource(clip(tmp_path / "c.flac", 0.0, 26.0), speed=1.0))
    assert feature.dock.isVisible() and feature.panel.record_button.text() == "■ Stop"
    wait_until(lambda: w.model.rowCount() >= 2, timeout=60)
    assert feature.controller.active  # lines arrived while the recording went on (models load first)
    assert max(levels) > 50 and feature.panel.elapsed.text() != "0:00.0"
    assert w.waveform.duration > 0 and feature.captions.lines
    assert not any(w.actions_by_name[n].isEnabled() for n in ("open", "transcribe", "retranscribe"))
    assert not w.open_path(DEMO)  # a file dropped on the window does not replace the recording either

    view = w.transcript_view
    editor = view.edit_text(0)
    editor.setPlainText("Let us keep this meeting brief please.")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: view.row_delegate.editor is None)

    qtbot.mouseClick(feature.panel.record_button, Qt.MouseButton.LeftButton)  # Stop
    wait_until(lambda: w.undo_stack.undoText() == "Keep lines edited while recording", timeout=180)
    texts = [u.text for u in w.model.utterances]
    assert texts[0] == "Let us keep this meeting brief please."
    assert any("notes" in t for t in texts[1:])  # the final run's lines around it
    [flac] = (tmp_path / "recordings").glob("*.flac")
    assert 0 < sf.info(flac).duration <= 26.0 and not marker_path(flac).exists()
    assert w.session.audio is not None and w.session.audio.path == flac
    w.undo_stack.undo()  # the pure final run is one step back
    assert w.model.utterances[0].text != "Let us keep this meeting brief please."


def test_a_device_failing_mid_recording_shows_a_message_and_keeps_the_recording(
    recorder_window, tmp_path: Path
) -> None:
    w = recorder_window
    damaged = clip(tmp_path / "d.flac", 0.0, 20.0)
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2 :] = bytes(len(data) - len(data) // 2)
    damaged.write_bytes(bytes(data))
    assert w.recording.start(FileSource(damaged, speed=8))
    wait_until(lambda: isinstance(w.last_dialog, QMessageBox) and w.last_dialog.isVisible(), timeout=30)
    assert w.last_dialog.windowTitle() == "Recording stopped"
    assert "kept" in w.last_dialog.text()
    [flac] = (tmp_path / "recordings").glob("*.flac")
    assert 4.0 < sf.info(flac).duration < 20.0
    wait_until(lambda: w.session.audio is not None and w.session.audio.path == flac, timeout=30)


def test_a_full_disk_mid_recording_says_so_and_the_recording_is_offered_back(
    make_window, qtbot, tmp_path: Path
) -> None:
    from tests.engine.live.conftest import small_tmpfs

    with small_tmpfs(tmp_path / "disk") as disk:
        (disk / "other-files.bin").write_bytes(b"\0" * 160 * 1024)  # about 3 s of FLAC left
        store = make_store(tmp_path)
        store.set_value("recordings_folder", str(disk))
        w = make_window(store=store)
        assert w.recording.start(FileSource(clip(tmp_path / "c.flac", 0.0, 30.0), speed=4))
        wait_until(lambda: isinstance(w.last_dialog, QMessageBox) and w.last_dialog.isVisible(), timeout=30)
        assert w.last_dialog.windowTitle() == "Recording stopped"
        assert "the disk is full" in w.last_dialog.text() and "--recover" in w.last_dialog.text()
        [flac] = disk.glob("*.flac")
        assert marker_path(flac).exists()  # kept for recovery: it could not be rewritten clean
        wait_until(lambda: not w.recording.controller.busy, timeout=60)
        assert w.last_dialog.windowTitle() == "Recording stopped"  # the unfinished file is not opened
        assert w.session.audio is None
        w.last_dialog.close()
        (disk / "other-files.bin").unlink()  # the user frees some space
        again = make_window(store=store)
        box = again.recording.offer_recovery()
        assert box is not None and flac.name in box.text()
        qtbot.mouseClick(again.recording.recover_button, Qt.MouseButton.LeftButton)
        wait_until(lambda: again.session.audio is not None and again.session.audio.path == flac, timeout=30)
        assert again.session.audio.recording.duration >= 2.0  # at least up to the first save
        assert not marker_path(flac).exists()


def on_disk_seconds(folder: Path, at_least: float, timeout: float = 120.0) -> float:
    """Wait until the recording in `folder` reads as `at_least` seconds (flushed while recording)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in folder.glob("*.flac"):
            try:
                with av.open(str(path)) as container:
                    seconds = sum(f.samples / f.sample_rate for f in container.decode(audio=0))
            except av.FFmpegError:  # a header not yet written
                continue
            if seconds >= at_least:
                return seconds
        time.sleep(0.2)
    raise AssertionError(f"the recording never reached {at_least} s on disk")


def test_a_recording_killed_mid_way_is_offered_for_recovery_at_the_next_start(
    make_window, qtbot, tmp_path: Path
) -> None:
    folder = tmp_path / "recordings"
    source = clip(tmp_path / "c.flac", 0.0, 20.0)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "engine", "record", "--play", str(source), "--out", str(folder),
               "--no-transcribe"]  # fmt: skip
    proc = subprocess.Popen(command, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None and "recording" in proc.stderr.readline()
    flushed = on_disk_seconds(folder, at_least=2.5)  # what a crash now must not lose
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)

    store = make_store(tmp_path)
    store.set_value("recordings_folder", str(folder))
    w = make_window(store=store)
    box = w.recording.offer_recovery()
    assert box is not None and box.isVisible() and "cut short" in box.text()
    qtbot.mouseClick(w.recording.recover_button, Qt.MouseButton.LeftButton)
    wait_until(lambda: w.session.audio is not None and not w.session.busy, timeout=30)
    assert flushed - 0.001 <= w.session.audio.recording.duration <= 20.0  # what was flushed before the kill
    assert not list(folder.glob("*.recording.json"))


def test_record_first_shows_the_bar_and_the_microphone_choice_is_remembered(make_window, tmp_path: Path):
    store = make_store(tmp_path)
    w = make_window(store=store)
    w.actions_by_name["record"].trigger()
    assert w.recording.dock.isVisible() and not w.recording.controller.active  # choose, then record
    w.recording.panel.set_devices(["Built-in", "USB headset"], None)
    w.recording.panel.devices.setCurrentIndex(1)
    again = make_window(store=store)
    again.recording.panel.set_devices(["Built-in", "USB headset"], str(store.value("record_device", "")))
    assert again.recording.panel.device_name() == "USB headset"


def test_the_bar_says_loading_models_until_the_engines_live_stream_is_open(recorder_window, tmp_path: Path):
    w = recorder_window
    panel = w.recording.panel
    assert w.recording.start(FileSource(clip(tmp_path / "c.flac", 0.0, 30.0)))
    assert panel.lag.text() == "Loading models…"  # shown at once, before any line can come
    wait_until(lambda: panel.lag.text() != "Loading models…", timeout=60)
    assert not w.recording.controller.link.connecting  # the engine's live stream is open
    w.recording.stop()
    wait_until(lambda: not w.recording.controller.active, timeout=10)


def test_lines_arriving_while_recording_leave_open_and_transcribe_off_without_switching_them(
    recorder_window, tmp_path: Path
) -> None:
    # catches: the window enabling Open, Transcribe and Re-transcribe on every change of the document
    # while it records (the recording then switching them off again: every live line and every edit
    # repainted the toolbar twice); the three still on, or never on again once the recording is final
    from engine.types import Utterance

    w = recorder_window
    guarded = [w.actions_by_name[n] for n in ("open", "transcribe", "retranscribe")]
    record = w.actions_by_name["record"]
    assert w.recording.start(FileSource(clip(tmp_path / "c.flac", 0.0, 4.0), speed=2.0))
    assert record.isEnabled() and record.text() == "Stop &Recording"  # Stop, while it records
    switched: list[str] = []
    for action in guarded:
        action.changed.connect(lambda a=action: switched.append(a.text()))
    for i in range(3):  # as live lines arrive
        w.model.replace_rows(w.model.rowCount(), 0, [Utterance(float(i), i + 0.5, f"line {i}")])
    assert switched == [] and not any(a.isEnabled() for a in guarded)
    final: list[object] = []
    w.session.transcribed.connect(final.append)
    during: list[tuple[bool, str]] = []  # the Record action as the final run starts
    w.session.job_started.connect(lambda _text, kind: kind == "transcribe" and during.append(
        (record.isEnabled(), record.text())))  # fmt: skip
    order: list[str] = []  # the final run waits for the live lines (a recording's first run too)
    direct = Qt.ConnectionType.DirectConnection  # noted as said, on the thread that says it
    w.recording.controller.caught_up.connect(lambda: order.append("caught up"), direct)
    w.session.job_started.connect(lambda _text, kind: kind == "transcribe" and order.append("final run"))
    wait_until(lambda: w.recording.controller.session.capture.seconds > 0, timeout=10)  # some sound came
    w.recording.stop()
    wait_until(lambda: bool(final) and not w.session.busy, timeout=120)  # the final run landed
    assert order == ["caught up", "final run"]
    assert all(a.isEnabled() for a in guarded)
    assert during == [(False, "&Record…")]  # no new recording over the final run
    assert record.isEnabled() and record.text() == "&Record…"


def test_stop_closes_the_device_and_file_off_the_windows_thread_then_says_the_file_is_whole(
    recorder_window, tmp_path: Path
) -> None:
    # catches: the device stopped and the file finished on the window's thread at Stop (an input
    # device waits for its buffers as it stops: 0.1 s of a frozen window); `stopped` said before the
    # file is complete; the window still "recording" after Stop; the Record action and the bar's
    # button still saying Stop until the device has closed (0.1 s after the key); the closing
    # thread at the window's priority
    import threading

    w = recorder_window
    in_stop, said, niceness = [False], [], []
    w.recording.controller.stopped.connect(
        lambda path: said.append((path, in_stop[0] and threading.current_thread() is threading.main_thread()))
    )
    w.recording.controller.stopped.connect(  # on the thread that closed them
        lambda _path: niceness.append(thread_niceness()),
        Qt.ConnectionType.DirectConnection,
    )
    assert w.recording.start(FileSource(clip(tmp_path / "c.flac", 0.0, 20.0), speed=4))
    capture = w.recording.controller.session.capture
    wait_until(lambda: capture.seconds > 2, timeout=30)
    in_stop[0] = True
    w.recording.stop()
    in_stop[0] = False
    assert not w.recording.controller.active  # Stop takes effect at once
    record = w.actions_by_name["record"]
    assert (record.text(), record.isEnabled()) == ("&Record…", False)  # shown at once, off while it closes
    assert w.recording.panel.record_button.text() == "● Record"
    wait_until(lambda: bool(said), timeout=30)
    [flac] = (tmp_path / "recordings").glob("*.flac")
    assert said == [(flac, False)]  # not from inside Stop on the window's thread
    assert not marker_path(flac).exists() and sf.info(flac).duration > 2  # whole when said
    if LINUX:  # closed below the window, as the engine's work is
        assert niceness == [stepped_back()]
    wait_until(lambda: not w.recording.controller.busy, timeout=60)


def test_the_recorded_file_opens_with_the_speech_found_while_recording_not_looked_for_again(
    recorder_window, tmp_path: Path
) -> None:
    # catches: the window's process looking for the recording's speech again after Stop (seconds of
    # its interpreter for a long recording, taken from the window while the user edits); the
    # recording's own speech not the plan drawn, or drawn without its chunks
    from engine.types import Stage

    w = recorder_window
    worker, stages, planned = w.session.runner.worker, [], []
    worker.prepared.connect(lambda p: planned.append(p), Qt.ConnectionType.DirectConnection)
    worker.progress.connect(lambda p: planned or stages.append(p.stage), Qt.ConnectionType.DirectConnection)
    assert w.recording.start(FileSource(clip(tmp_path / "c.flac", 0.0, 12.0), speed=4))
    wait_until(lambda: bool(planned), timeout=60)  # the file played to its end, stopped, opened
    segments = tuple(w.recording.controller.session.segments)
    assert segments and planned[0].speech == segments and planned[0].chunks
    assert Stage.LOAD in stages and Stage.VAD not in stages  # decoded, its speech not looked for
    wait_until(lambda: not w.recording.controller.busy and not w.session.busy, timeout=120)
    w.recording.controller.session.segments_whole = False  # as a live path that failed leaves it
    assert w.recording.controller.speech() is None  # the file's speech is then looked for


def test_pause_leaves_the_paused_audio_out_of_the_recording(recorder_window, qtbot, tmp_path: Path) -> None:
    w = recorder_window
    panel = w.recording.panel
    source = clip(tmp_path / "c.flac", 0.0, 30.0)  # 7.5 s at 4x: time left after the resume
    assert w.recording.start(FileSource(source, speed=4))
    qtbot.wait(500)
    qtbot.mouseClick(panel.pause_button, Qt.MouseButton.LeftButton)
    assert panel.pause_button.text() == "Resume" and w.recording.controller.session.capture.paused
    capture = w.recording.controller.session.capture
    wait_until(lambda: capture.backlog == 0, timeout=30)  # blocks that arrived before the pause are written
    qtbot.wait(300)  # and the label shows them
    elapsed = panel.elapsed.text()
    qtbot.wait(1000)  # 4 s of the clip go by unrecorded
    assert panel.elapsed.text() == elapsed != "0:00.0"  # the clock stood still while paused
    qtbot.mouseClick(panel.pause_button, Qt.MouseButton.LeftButton)
    assert panel.pause_button.text() == "Pause"
    wait_until(lambda: panel.elapsed.text() != elapsed, timeout=5)  # and runs again
    wait_until(lambda: not w.recording.controller.active, timeout=30)
    [flac] = (tmp_path / "recordings").glob("*.flac")
    recorded, _ = sf.read(flac, dtype="float32")
    original, _ = sf.read(source, dtype="float32")
    # the file is the clip with one stretch cut out: what came before the pause, then the rest
    cut = int(np.argmax(np.abs(recorded - original[: len(recorded)]) > 2 / 32768))
    rest = len(recorded) - cut
    assert np.allclose(recorded[:cut], original[:cut], atol=2 / 32768) and cut > 16000
    assert np.allclose(recorded[cut:], original[len(original) - rest :], atol=2 / 32768)
    assert (len(original) - len(recorded)) / 16000 > 1.0  # the 1 s (or more) paused at 4x speed
    wait_until(lambda: panel.elapsed.text() == format_time(len(recorded) / 16000), timeout=10)


def engine_metrics(window) -> dict[str, float]:
    """The app's engine process's /metrics, read with its key."""
    import urllib.request

    engine = window.session.runner.worker.engine
    request = urllib.request.Request(
        f"{engine.url}/metrics", headers={"Authorization": f"Bearer {engine.key}"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        lines = answer.read().decode().splitlines()
    return {n: float(v) for n, v in (li.rsplit(" ", 1) for li in lines if li and not li.startswith("#"))}


def test_live_lines_come_from_the_engine_process_with_provisional_speakers(recorder_window, tmp_path: Path):
    # catches: live lines decoded in the window's process again (a model beside the editor), the
    # audio not reaching the engine's live stream, the speakers not asked for, or the stream left
    # open after the recording (the engine keeps its session and audio)
    w = recorder_window
    assert w.recording.start(FileSource(clip(tmp_path / "c.flac", 0.0, 26.0), speed=2.0))
    wait_until(lambda: w.model.rowCount() >= 3, timeout=90)
    assert engine_metrics(w)["murmur_realtime_sessions"] == 1
    assert w.recording.controller.session.transcriber is None  # nothing decodes in this process
    speakers = {u.speaker for u in w.model.utterances}
    assert None not in speakers and len(speakers) >= 2  # "Speaker 1", "Speaker 2"… while recording
    w.recording.stop()
    wait_until(lambda: not w.recording.controller.busy, timeout=120)
    wait_until(lambda: engine_metrics(w)["murmur_realtime_sessions"] == 0, timeout=10)


def test_an_engine_killed_while_recording_stops_live_lines_with_a_message_and_the_recording_goes_on(
    recorder_window, tmp_path: Path
) -> None:
    # catches: a lost live stream not noticed (the lag grows silently), said more than once, or
    # ending the recording with it
    w = recorder_window
    assert w.recording.start(FileSource(clip(tmp_path / "c.flac", 0.0, 30.0), speed=1.0))
    wait_until(lambda: w.model.rowCount() >= 1, timeout=90)
    shown: list[str] = []
    w.recording.controller.failed.connect(shown.append)
    os.kill(w.session.runner.worker.engine.pid, signal.SIGKILL)
    wait_until(lambda: shown, timeout=30)
    assert "live lines stop here" in shown[0] and "The recording goes on" in shown[0]
    assert w.recording.controller.active
    seconds = w.recording.controller.session.capture.seconds
    wait_until(lambda: w.recording.controller.session.capture.seconds > seconds + 2, timeout=30)
    assert len(shown) == 1  # said once
    w.recording.stop()
    [flac] = (tmp_path / "recordings").glob("*.flac")
    wait_until(lambda: not w.recording.controller.busy, timeout=60)
    assert sf.info(flac).duration > seconds + 2


def test_known_voices_are_named_while_recording_and_a_stranger_keeps_speaker_n(
    recorder_window, tmp_path: Path, monkeypatch
) -> None:
    # catches: the engine's names never reaching the window (live lines stay "Speaker N" until the
    # final run), a name put on the wrong live speaker, or a stranger named
    from app.settings import TranscribeSettings
    from engine.voices import library_path
    from tests.engine.live.test_live_names import remembered, tuesday

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the engine process inherits it
    library_path(None).parent.mkdir(parents=True)
    remembered(library_path(None))  # Bob and Carol, from another meeting
    meeting = tuesday()  # Carol, Erin (never remembered), Bob
    sf.write(tmp_path / "tuesday.wav", meeting.recording().samples, 16000)
    w = recorder_window
    w.set_settings(TranscribeSettings(known_voices=True))
    assert w.recording.start(FileSource(tmp_path / "tuesday.wav", speed=1.0))
    book = lambda: {s.id: s.name for s in w.model.book}  # noqa: E731
    wait_until(lambda: {"Bob", "Carol"} <= set(book().values()), timeout=150)
    assert w.recording.controller.active  # named while recording, not by the final run
    spoke: dict[str, list[str]] = {}
    for u in w.model.utterances:
        turn = max(meeting.turns, key=lambda t: min(t.end, u.end) - max(t.start, u.start))
        spoke.setdefault(book()[u.speaker], []).append(turn.speaker)
    for name in ("Bob", "Carol"):
        assert max(set(spoke[name]), key=spoke[name].count) == name.lower()
    assert all(s.score is not None for s in w.model.book if s.name in ("Bob", "Carol"))
    w.recording.stop()
    wait_until(lambda: not w.recording.controller.busy, timeout=120)
