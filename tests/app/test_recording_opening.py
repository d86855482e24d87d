"""The Record key never waits for the input device: it opens on a thread of its own.

Opening and starting a PortAudio input held the window's thread 6–10 ms through PulseAudio, more
where the sound server must first switch a headset's profile. `GatedSource` is a file played as a
source whose device takes until its gate is set to open (and may then refuse, as a busy device
does): the recording shows at once, the old transcript stays until the device has opened, a device
that will not open loses nothing, and a Stop or a closing window while it opens ends cleanly."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import soundfile as sf
from PySide6.QtWidgets import QApplication, QMessageBox
from qt_helpers import DEMO, make_store, show_transcript, wait_until

from app.recording.controller import RecordingController
from engine.errors import RecordingError
from engine.live.flac_writer import marker_path
from engine.live.sources import FileSource
from engine.types import Speaker, Transcript, Utterance

BUSY = "the input device Headset will not open: Device unavailable [PaErrorCode -9985]"


class GatedSource(FileSource):
    """A file played as a source whose device opens once `gate` is set, or then refuses `refusal`;
    one that does not `play` sends nothing."""

    def __init__(self, path: Path, refusal: str | None = None, speed: float = 8.0, plays: bool = True):
        super().__init__(path, speed=speed)
        self.gate, self.refusal, self.plays = threading.Event(), refusal, plays
        self.opened_on: list[threading.Thread] = []
        self.waiting = False  # inside the device's open now
        self.stopped_while_opening = False  # a real device would then open after its stop, and stay open

    def start(self, deliver, fail) -> None:
        self.opened_on.append(threading.current_thread())
        self.waiting = True
        self.gate.wait(timeout=5)  # a device opened on the caller's thread returns after 5 s
        self.waiting = False
        if self.refusal is not None:
            raise RecordingError(self.refusal)
        if self.plays:  # else a device that has not sent its first block yet
            super().start(deliver, fail)

    def stop(self) -> None:
        self.stopped_while_opening |= self.waiting
        super().stop()


class SlowToTell(threading.Event):
    """An event whose setter loses the CPU for 0.3 s right after setting it."""

    def set(self) -> None:
        super().set()
        time.sleep(0.3)


def clip(path: Path, seconds: float) -> Path:
    samples, rate = sf.read(DEMO, dtype="float32", stop=int(seconds * 16000))
    sf.write(path, samples, rate)
    return path


@pytest.fixture
def controller(qapp: QApplication) -> Iterator[RecordingController]:
    made = RecordingController()
    told: list[str] = []
    for name in ("opened", "refused", "stopped"):
        getattr(made, name).connect(lambda *_, n=name: told.append(n))
    made.told = told  # type: ignore[attr-defined]
    yield made
    if made.session is not None and made._stopped:  # bounded here: a close that hangs fails the test
        assert made._closed.wait(timeout=10), "the recording never finished closing"
    made.shutdown()
    made.deleteLater()
    QApplication.processEvents()


def test_start_returns_while_the_device_is_still_opening_and_opened_follows(controller, tmp_path: Path):
    # catches: the device opened on the window's thread (start returns only once it has); the
    # recording not shown as one until the device has opened; `opened` said before it has
    source = GatedSource(clip(tmp_path / "c.flac", 1.0))
    controller.start(source, tmp_path / "rec.flac")
    wait_until(lambda: bool(source.opened_on), timeout=10)
    assert source.waiting and source.opened_on[0] is not threading.main_thread()
    assert controller.active and controller.busy  # Stop shows at once
    QApplication.processEvents()
    assert controller.told == []
    source.gate.set()
    wait_until(lambda: controller.told == ["opened", "stopped"], timeout=30)  # the file played to its end
    assert sf.info(str(tmp_path / "rec.flac")).duration == pytest.approx(1.0, abs=0.05)


def test_a_device_that_will_not_open_is_refused_once_and_leaves_no_file(controller, tmp_path: Path) -> None:
    # catches: a refused device taken for a recording that ended by itself (`stopped`, then the
    # window opening a file that is not there); the window free to start another recording before
    # it has heard, or still busy after; the engine asked for live lines of a recording never begun
    source = GatedSource(clip(tmp_path / "c.flac", 1.0), refusal=BUSY)
    source.gate.set()
    reasons: list[str] = []
    asked: list[int] = []
    controller.refused.connect(reasons.append)
    controller.start(source, tmp_path / "rec.flac", lambda: asked.append(1) or ("http://127.0.0.1:9", None))
    assert controller._opening.done.wait(timeout=10)  # refused on its thread; the window not told yet
    assert controller.busy and not controller.active
    wait_until(lambda: bool(reasons), timeout=10)
    wait_until(lambda: not controller._timer.isActive(), timeout=5)  # the ticks that follow say nothing
    assert reasons == [BUSY] and controller.told == ["refused"]
    assert not controller.busy and not controller.active
    assert controller._closed.is_set()  # a window closing now does not wait for a device never opened
    assert asked == [] and not controller.link.connecting
    assert not (tmp_path / "rec.flac").exists() and not marker_path(tmp_path / "rec.flac").exists()


def test_stop_while_the_device_opens_ends_the_recording_once_it_has_opened(controller, tmp_path: Path):
    # catches: the device stopped and the file closed while the device was still opening (the
    # opening then carries on: a real device stays open after its stop); `stopped` before `opened`
    # (the opening told the window after it let the closing thread go)
    source = GatedSource(clip(tmp_path / "c.flac", 20.0), speed=1.0)
    controller.start(source, tmp_path / "rec.flac")
    wait_until(lambda: source.waiting, timeout=10)
    controller._opening.done = SlowToTell()  # the opening thread loses the CPU once it says it is done
    assert controller.stop() == tmp_path / "rec.flac" and not controller.active  # shown at once
    source.gate.set()
    wait_until(lambda: "stopped" in controller.told, timeout=30)
    assert controller.told == ["opened", "stopped"] and not source.stopped_while_opening
    assert not marker_path(tmp_path / "rec.flac").exists()  # finished, not cut short


def test_stop_while_a_refusing_device_opens_says_it_was_refused_and_nothing_else(
    controller, tmp_path: Path
) -> None:
    # catches: the closing thread going on to close a session that never started (`stopped` said
    # for a file that is not there); the window left catching up for ever
    source = GatedSource(clip(tmp_path / "c.flac", 1.0), refusal=BUSY)
    controller.start(source, tmp_path / "rec.flac")
    wait_until(lambda: source.waiting, timeout=10)
    controller.stop()
    source.gate.set()
    wait_until(lambda: "refused" in controller.told, timeout=10)
    assert controller._closed.wait(timeout=5)
    QApplication.processEvents()
    assert controller.told == ["refused"] and not controller.busy


def test_a_window_closing_while_the_device_opens_waits_for_it_and_finishes_the_file(
    controller, tmp_path: Path
) -> None:
    # catches: the session stopped before its device had opened (the device then opens after the
    # window has gone, recording into a file nobody finishes: its marker stays)
    source = GatedSource(clip(tmp_path / "c.flac", 20.0), speed=1.0)
    controller.start(source, tmp_path / "rec.flac")
    wait_until(lambda: source.waiting, timeout=10)
    threading.Timer(0.3, source.gate.set).start()
    controller.shutdown()
    assert source.gate.is_set() and not source.stopped_while_opening
    assert controller.session.capture.ended.is_set() and not marker_path(tmp_path / "rec.flac").exists()


@pytest.fixture
def window(make_window, tmp_path: Path):
    store = make_store(tmp_path)
    store.set_value("recordings_folder", str(tmp_path / "recordings"))
    made = make_window(store=store)
    line = Utterance(0.0, 2.0, "Kept until the device opens.", "S1")
    show_transcript(made, Transcript((line,), (Speaker("S1", "Ann"),)))
    made.waveform.set_speech([0.0], [2.0])
    made.undo_stack.setClean()
    return made


def test_the_open_transcript_stays_until_the_device_has_opened_then_the_recording_takes_the_window(
    window, tmp_path: Path
) -> None:
    # catches: the document replaced at the key, before the device has opened; the old
    # transcript's speech regions left on the new recording's waveform
    source = GatedSource(clip(tmp_path / "c.flac", 1.0))
    assert window.recording.start(source)
    assert window.recording.panel.record_button.text() == "■ Stop"  # at once
    assert window.actions_by_name["record"].text() == "Stop &Recording"
    wait_until(lambda: source.waiting, timeout=10)
    assert window.model.rowCount() == 1
    source.gate.set()
    wait_until(lambda: window.model.rowCount() == 0, timeout=10)
    assert window.statusBar().currentMessage().startswith("Recording to ")
    assert len(window.waveform.speech.starts) == 0  # the old transcript's speech is gone with it


def test_a_device_that_will_not_open_keeps_the_transcript_and_says_why(window, tmp_path: Path) -> None:
    # catches: the transcript on show or its undo history thrown away for a recording that never
    # began; the bar and the Record action still saying Stop; no message, or a different one
    undo = window.undo_stack.count()
    assert undo == 1  # the transcript's own step
    source = GatedSource(clip(tmp_path / "c.flac", 1.0), refusal=BUSY)
    source.gate.set()
    assert window.recording.start(source)
    wait_until(lambda: isinstance(window.last_dialog, QMessageBox) and window.last_dialog.isVisible(), 10)
    assert window.last_dialog.windowTitle() == "Cannot record" and window.last_dialog.text() == BUSY
    assert window.model.utterance(0).text == "Kept until the device opens."
    assert window.undo_stack.count() == undo
    assert window.recording.panel.record_button.text() == "● Record"
    assert window.recording.panel.lag.text() == ""  # no "Loading models…" left for a recording never begun
    record = window.actions_by_name["record"]
    assert record.isEnabled() and record.text() == "&Record…"
    assert not list((tmp_path / "recordings").glob("*.flac"))


def test_a_recording_stopped_before_any_sound_came_leaves_no_file_and_no_error(window, tmp_path: Path):
    # catches: a recording with no audio opened as one (libsndfile leaves a FLAC without frames at
    # 0 bytes: "Cannot open this file", and the window waiting for a final run that never comes)
    source = GatedSource(clip(tmp_path / "c.flac", 1.0), plays=False)
    source.gate.set()
    assert window.recording.start(source)
    wait_until(lambda: window.model.rowCount() == 0, timeout=10)  # the device has opened
    window.recording.stop()
    wait_until(lambda: not window.recording.controller.busy and not window.session.busy, timeout=10)
    assert window.statusBar().currentMessage() == "Nothing was recorded: it was stopped before any sound came"
    assert window.last_dialog is None and not list((tmp_path / "recordings").iterdir())
