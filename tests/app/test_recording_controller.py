"""`RecordingController` on its own, as the window's recording bar sees it: a file played as the
source, the live lines from a `/v1/realtime` route on uvicorn in this process (its decoder the
scripted one of `test_realtime_session`: each segment comes back as two lines), and what the bar
is told — `status`, `line`, `segment`, `failed`, `stopped`, `caught_up` — and the display signal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtWidgets import QApplication
from qt_helpers import DEMO, wait_until

from app.recording.controller import DISPLAY_RATE, RecordingController
from engine.errors import ServerError
from engine.live.sources import FileSource
from tests.engine.serve import test_realtime_session as scripted
from tests.engine.serve.conftest import KEY
from tests.engine.serve.test_realtime_route import RealtimeServer, serving

detector = scripted.detector  # the server's voice-activity detection, loaded once


class Told:
    """Everything a controller emits, in order, as the recording bar receives it."""

    def __init__(self, controller: RecordingController) -> None:
        self.status: list[Any] = []
        self.lines: list[Any] = []
        self.segments: list[Any] = []
        self.failed: list[str] = []
        self.stopped: list[Path] = []
        self.caught_up = 0
        controller.status.connect(self.status.append)
        controller.line.connect(self.lines.append)
        controller.segment.connect(self.segments.append)
        controller.failed.connect(self.failed.append)
        controller.stopped.connect(self.stopped.append)
        controller.caught_up.connect(self._caught_up)

    def _caught_up(self) -> None:
        self.caught_up += 1


@pytest.fixture
def controller(qapp: QApplication) -> Iterator[RecordingController]:
    made = RecordingController()
    yield made
    if made.session is not None and made._stopped:  # a stop in progress: bounded here, so that a close
        assert made._closed.wait(timeout=10), "the recording never finished closing"  # that hangs fails
    made.shutdown()
    made.deleteLater()
    QApplication.processEvents()


def clip(path: Path, seconds: float, start: float = 0.0) -> Path:
    samples, rate = sf.read(
        DEMO, dtype="float32", start=int(start * 16000), stop=int((start + seconds) * 16000)
    )
    sf.write(path, samples, rate)
    return path


class StuckSource(FileSource):
    """A file played as a source whose device then refuses to close (an unplugged USB input)."""

    def stop(self) -> None:
        super().stop()
        raise OSError("the device is busy")


def test_a_file_played_to_its_end_is_kept_whole_then_stopped_and_caught_up_are_said_once(
    controller: RecordingController, tmp_path: Path
) -> None:
    # catches: the status not sent at once at Start, `stopped` said twice or never when the source
    # ends by itself, `caught_up` before `stopped`, the bar still busy (or its timer running) after
    source = clip(tmp_path / "c.flac", 4.0)
    told = Told(controller)
    out = tmp_path / "rec.flac"
    controller.start(FileSource(source, speed=8), out)
    assert len(told.status) == 1 and not told.status[0].loading  # at once, no engine to wait for
    assert controller.active and controller.busy and controller.path == out
    wait_until(lambda: told.caught_up == 1, timeout=10)
    assert told.stopped == [out] and told.failed == []
    assert not controller.active and not controller.busy
    wait_until(lambda: not controller._timer.isActive(), timeout=5)  # no status once nothing is left
    assert controller.stop() is None  # already stopped: nothing more to do
    recorded, _ = sf.read(out, dtype="float32")
    original, _ = sf.read(source, dtype="float32")
    assert len(recorded) == len(original)
    assert told.segments and all(0 <= s.start < s.end <= 4.0 for s in told.segments)


def test_the_display_signal_is_the_min_and_max_of_every_32_samples_recorded(
    controller: RecordingController, tmp_path: Path
) -> None:
    # catches: min and max swapped or not interleaved, a block size other than 32 (the waveform's
    # time axis assumes 1000 values a second), samples left over from one block lost at the next
    source = clip(tmp_path / "c.flac", 2.0)
    told = Told(controller)
    controller.start(FileSource(source, speed=8, block_seconds=0.0101), tmp_path / "rec.flac")  # 161.6
    wait_until(lambda: told.caught_up == 1, timeout=10)
    recorded, _ = sf.read(tmp_path / "rec.flac", dtype="float32")
    blocks = recorded[: len(recorded) // 32 * 32].reshape(-1, 32)
    expected = np.stack((blocks.min(axis=1), blocks.max(axis=1)), axis=1).reshape(-1)
    assert DISPLAY_RATE == 1000
    np.testing.assert_allclose(controller.display(), expected, atol=1 / 32768)


def test_a_second_recording_starts_its_display_signal_from_nothing(
    controller: RecordingController, tmp_path: Path
) -> None:
    # catches: the first recording's waveform (or its last partial block) left in front of the next
    told = Told(controller)
    controller.start(FileSource(clip(tmp_path / "a.flac", 1.0), speed=8, block_seconds=0.0101),
                     tmp_path / "a-rec.flac")  # fmt: skip
    wait_until(lambda: told.caught_up == 1, timeout=10)
    controller.start(FileSource(clip(tmp_path / "b.flac", 0.5, start=6.0), speed=8), tmp_path / "b-rec.flac")
    wait_until(lambda: told.caught_up == 2, timeout=10)
    recorded, _ = sf.read(tmp_path / "b-rec.flac", dtype="float32")
    blocks = recorded[: len(recorded) // 32 * 32].reshape(-1, 32)
    expected = np.stack((blocks.min(axis=1), blocks.max(axis=1)), axis=1).reshape(-1)
    np.testing.assert_allclose(controller.display(), expected, atol=1 / 32768)
    assert told.stopped == [tmp_path / "a-rec.flac", tmp_path / "b-rec.flac"]


def test_stop_and_pause_before_a_recording_do_nothing(controller: RecordingController) -> None:
    # catches: Stop, Pause or Resume on a bar that never recorded raising instead of doing nothing
    controller.pause()
    controller.resume()
    assert controller.stop() is None and not controller.busy and controller.display().size == 0


def test_pause_and_resume_are_shown_in_the_status_and_stop_ends_the_recording_at_once(
    controller: RecordingController, qtbot, tmp_path: Path
) -> None:
    # catches: Pause or Resume not reaching the capture, Stop giving no path or not ending
    # `active` at once, the status no longer sent while the lines catch up
    told = Told(controller)
    out = tmp_path / "rec.flac"
    controller.start(FileSource(clip(tmp_path / "c.flac", 20.0), speed=2), out)
    controller.pause()
    qtbot.waitUntil(lambda: told.status[-1].paused, timeout=5000)
    controller.resume()
    qtbot.waitUntil(lambda: not told.status[-1].paused, timeout=5000)
    assert controller.stop() == out and not controller.active and controller.busy
    assert controller.stop() is None  # a second Stop while it closes
    wait_until(lambda: told.caught_up == 1, timeout=10)
    assert told.stopped == [out] and sf.info(out).duration < 20.0


def test_live_lines_from_the_engine_reach_the_bar_and_the_status_counts_them(
    controller: RecordingController, detector, tmp_path: Path
) -> None:
    # catches: the audio not sent to the engine, its lines not emitted, the language not passed on,
    # provisional speakers not asked for by default, the status's line count or "loading models"
    # taken from the session (no engine there) instead of the link
    server = RealtimeServer(detector, backend=scripted.Echo())
    told = Told(controller)
    with serving(server) as url:
        base = url.replace("ws://", "http://").removesuffix("/v1/realtime")
        controller.start(FileSource(clip(tmp_path / "c.flac", 12.0), speed=6), tmp_path / "rec.flac",
                         lambda: (base, KEY), language="fr")  # fmt: skip
        assert told.status[0].loading  # "Loading models…" until the stream is open
        wait_until(lambda: told.caught_up == 1, timeout=20)
    assert told.failed == [] and len(told.lines) >= 2
    assert [line.utterance.text for line in told.lines[1::2]] == ["two"] * (len(told.lines) // 2)
    assert all(line.utterance.text.startswith("fr ") for line in told.lines[::2])  # decoded as French
    assert all(line.utterance.speaker.startswith("S") for line in told.lines)  # speakers asked by default
    controller._tick()
    assert told.status[-1].lines == len(told.lines) and not told.status[-1].loading


def test_an_engine_that_will_not_start_is_said_once_and_the_recording_goes_on(
    controller: RecordingController, tmp_path: Path
) -> None:
    # catches: the link's failure dropped, said without "The recording goes on", or ending the recording
    def refuse() -> tuple[str, str | None]:
        raise ServerError("no model at /nowhere")

    told = Told(controller)
    out = tmp_path / "rec.flac"
    controller.start(FileSource(clip(tmp_path / "c.flac", 2.0), speed=8), out, refuse)
    wait_until(lambda: told.caught_up == 1, timeout=10)
    assert told.failed == [
        "Live transcription: live lines cannot start: no model at /nowhere\n\nThe recording goes on."
    ]
    assert told.stopped == [out] and sf.info(out).duration == pytest.approx(2.0, abs=0.01)


def test_a_source_failing_mid_way_says_the_recording_is_kept_and_where(
    controller: RecordingController, tmp_path: Path
) -> None:
    # catches: a failing device said as a live-transcription problem, or without the file's place
    damaged = clip(tmp_path / "d.flac", 20.0)
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2 :] = bytes(len(data) - len(data) // 2)
    damaged.write_bytes(bytes(data))
    told = Told(controller)
    out = tmp_path / "rec.flac"
    controller.start(FileSource(damaged, speed=16), out)
    wait_until(lambda: told.caught_up == 1, timeout=10)
    (message,) = told.failed
    assert message.startswith("file d.flac stopped after ") and "Live transcription" not in message
    assert message.endswith(f"\n\nEverything recorded until then is kept in {out}.")
    assert told.stopped == [out] and 4.0 < sf.info(out).duration < 20.0


def test_a_device_that_will_not_close_is_said_and_the_bar_still_leaves_recording(
    controller: RecordingController, tmp_path: Path
) -> None:
    # catches: a failing close left unsaid, or `stopped`/`caught_up` never coming after it (the bar
    # stuck in "recording")
    told = Told(controller)
    out = tmp_path / "rec.flac"
    controller.start(StuckSource(clip(tmp_path / "c.flac", 20.0), speed=2), out)
    controller.stop()
    wait_until(lambda: told.caught_up == 1, timeout=10)
    assert told.failed == ["The recording could not be closed: the device is busy"]
    assert told.stopped == [out] and not controller.busy


def test_closing_the_window_while_recording_finishes_the_file_and_drops_the_live_stream(
    controller: RecordingController, tmp_path: Path
) -> None:
    # catches: shutdown leaving the capture running (the file never finished) or the link open
    def refuse() -> tuple[str, str | None]:
        raise ServerError("no engine")

    out = tmp_path / "rec.flac"
    controller.start(FileSource(clip(tmp_path / "c.flac", 20.0), speed=2), out, refuse)
    wait_until(lambda: controller.session.capture.seconds > 0.5, timeout=10)
    controller.shutdown()
    assert controller.session.capture.ended.is_set() and not controller._timer.isActive()
    assert controller.link is not None and controller.link._failed
    assert 0.5 < sf.info(out).duration < 20.0


def test_an_engine_gone_while_recording_is_said_once_and_the_recording_goes_on(
    controller: RecordingController, detector, tmp_path: Path
) -> None:
    # catches: the tick no longer asking the link whether its stream was lost (the lines stop
    # silently), the loss said twice, or the recording ended with the stream
    server = RealtimeServer(detector, backend=scripted.Echo())
    told = Told(controller)
    out = tmp_path / "rec.flac"
    with serving(server) as url:
        base = url.replace("ws://", "http://").removesuffix("/v1/realtime")
        controller.start(FileSource(clip(tmp_path / "c.flac", 20.0), speed=2), out, lambda: (base, KEY))
        wait_until(
            lambda: controller.link.client is not None and controller.link.client.connected, timeout=20
        )
    wait_until(lambda: told.failed, timeout=10)
    assert controller.active
    seconds = controller.session.capture.seconds
    wait_until(lambda: controller.session.capture.seconds > seconds + 0.5, timeout=10)
    controller.stop()
    wait_until(lambda: told.caught_up == 1, timeout=20)
    (message,) = told.failed
    assert message.startswith("Live transcription: the engine closed the live stream (code ")
    assert message.endswith("); live lines stop here\n\nThe recording goes on.")
    assert told.stopped == [out] and sf.info(out).duration > seconds + 0.5


def test_a_controller_belongs_to_the_window_that_made_it_and_has_no_recording_yet(qapp: QApplication) -> None:
    # catches: the parent not passed on (the controller outliving its window), its ticking timer not
    # its child, a path other than None before anything was recorded
    from PySide6.QtCore import QObject, QTimer

    window = QObject()
    made = RecordingController(window)
    assert made.parent() is window and made.findChildren(QTimer) == [made._timer]
    assert made.path is None and not made.busy
    window.deleteLater()
    QApplication.processEvents()


def test_the_lag_shown_is_the_engines_backlog_while_its_decoder_is_behind(
    controller: RecordingController, detector, tmp_path: Path
) -> None:
    # catches: the status's "behind" taken from the session (always 0 here) instead of the engine's
    # backlog, or not given at all
    import threading

    hold = threading.Event()  # the engine's decoder waits: speech piles up behind it
    server = RealtimeServer(detector, backend=scripted.Echo(hold=hold))
    told = Told(controller)
    with serving(server) as url:
        base = url.replace("ws://", "http://").removesuffix("/v1/realtime")
        controller.start(FileSource(clip(tmp_path / "c.flac", 12.0), speed=6), tmp_path / "rec.flac",
                         lambda: (base, KEY))  # fmt: skip
        wait_until(lambda: any(s.behind_seconds > 0 for s in told.status), timeout=10)
        hold.set()
        wait_until(lambda: told.caught_up == 1, timeout=20)
    assert told.lines
