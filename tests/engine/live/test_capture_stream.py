"""The capture stream block by block: a source the test feeds by hand (as PortAudio's callback
thread feeds a microphone's blocks) into the real writer thread, `FlacWriter` and file, so that
what each block does, when the device goes quiet or fails, and what a full disk leaves are exact.
The same stream fed from a real file is in `test_capture.py`."""

from __future__ import annotations

import json
import resource
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.errors import RecordingError
from engine.live.capture import CaptureStream
from engine.live.flac_writer import marker_path
from engine.live.recovery import find_partial
from tests.engine.live.conftest import small_tmpfs

RATE = 16000
BLOCK = 1600  # 0.1 s, as the sources deliver
QUANT = 2 / 32768  # 16-bit FLAC


class HandSource:
    """An input device whose blocks the test delivers; `start` may refuse, like a busy device."""

    sample_rate = RATE
    name = "hand source"

    def __init__(self, refuse: RecordingError | None = None) -> None:
        self.refuse = refuse
        self.stopped = 0
        self.deliver: Callable[[np.ndarray], None] = lambda block: None
        self.fail: Callable[[Exception], None] = lambda error: None

    def start(self, deliver: Callable[[np.ndarray], None], fail: Callable[[Exception], None]) -> None:
        if self.refuse is not None:
            raise self.refuse
        self.deliver, self.fail = deliver, fail

    def stop(self) -> None:
        self.stopped += 1


def block(peak: float, seed: int = 0) -> np.ndarray:
    samples = np.random.default_rng(seed).uniform(-1.0, 1.0, BLOCK).astype(np.float32)
    return samples / np.max(np.abs(samples)) * peak


def wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def started(path: Path, **kwargs: object) -> tuple[CaptureStream, HandSource]:
    source = HandSource()
    stream = CaptureStream(source, path, **kwargs)  # type: ignore[arg-type]
    stream.start()
    return stream, source


def test_each_block_is_written_then_handed_on_with_the_seconds_before_it(tmp_path: Path) -> None:
    seen: list[tuple[float, np.ndarray]] = []
    source = HandSource()
    stream = CaptureStream(source, tmp_path / "r.flac", on_block=lambda b, at: seen.append((at, b)))
    assert (stream.seconds, stream.flushed_seconds, stream.level) == (0.0, 0.0, 0.0)  # shown before start
    stream.start()
    assert json.loads(marker_path(tmp_path / "r.flac").read_text())["device"] == "hand source"
    [writer] = [t for t in threading.enumerate() if t.name == "capture-writer"]
    assert writer.daemon  # a recording still running never keeps the program from exiting
    blocks = [block(0.1, 1), block(0.5, 2), block(0.25, 3)]
    for b in blocks:
        source.deliver(b)
    wait_for(lambda: len(seen) == 3)
    assert [at for at, _ in seen] == [0.0, 0.1, 0.2]
    assert all(got is sent for (_, got), sent in zip(seen, blocks, strict=True))  # the very blocks, in order
    assert stream.level == pytest.approx(0.25)  # the latest block's peak, for the meter
    assert stream.seconds == pytest.approx(0.3) and stream.backlog == 0
    source.deliver(np.zeros(0, np.float32))  # a device callback with no frames
    wait_for(lambda: len(seen) == 4)
    assert stream.level == 0.0 and stream.error is None
    assert stream.stop() == tmp_path / "r.flac"
    written, _ = sf.read(tmp_path / "r.flac", dtype="float32")
    assert np.max(np.abs(written - np.concatenate(blocks))) < QUANT
    assert stream.flushed_seconds == pytest.approx(0.3) and stream.ended.is_set() and stream.error is None
    assert source.stopped >= 1 and not marker_path(tmp_path / "r.flac").exists()


def test_a_pause_keeps_nothing_and_a_quiet_device_while_paused_is_not_taken_for_unplugged(
    tmp_path: Path,
) -> None:
    errors: list[RecordingError] = []
    stream, source = started(tmp_path / "r.flac", on_error=errors.append, stall_seconds=0.5)
    source.deliver(block(0.3, 1))
    stream.pause()
    assert stream.paused
    source.deliver(block(0.9, 2))  # said while paused: not recorded
    time.sleep(1.0)  # the device sends nothing for twice the stall time while paused
    stream.resume()
    assert not stream.paused
    time.sleep(0.3)  # resumed, a moment before the next block arrives
    source.deliver(block(0.3, 3))
    wait_for(lambda: stream.seconds >= 0.2)
    stream.stop()
    assert errors == [] and stream.error is None
    written, _ = sf.read(tmp_path / "r.flac", dtype="float32")
    assert np.max(np.abs(written - np.concatenate([block(0.3, 1), block(0.3, 3)]))) < QUANT


def test_a_device_that_goes_quiet_is_reported_once_as_unplugged_and_what_came_is_kept(tmp_path: Path) -> None:
    errors: list[RecordingError] = []
    stream, source = started(tmp_path / "r.flac", on_error=errors.append, stall_seconds=0.5)
    source.deliver(block(0.3))
    assert stream.ended.wait(10)
    [error] = errors
    assert error is stream.error
    assert str(error).startswith("no audio from hand source for ")
    assert str(error).endswith(" s (unplugged?); the recording so far is kept in r.flac")
    assert source.stopped >= 1  # the device is let go
    assert sf.info(tmp_path / "r.flac").frames == BLOCK and not marker_path(tmp_path / "r.flac").exists()
    stream.stop()
    assert errors == [error]


def test_a_device_error_ends_the_recording_in_its_own_words(tmp_path: Path) -> None:
    errors: list[RecordingError] = []
    stream, source = started(tmp_path / "r.flac", on_error=errors.append)
    source.deliver(block(0.3))
    source.fail(OSError("the device vanished"))
    assert stream.ended.wait(10)
    assert [str(e) for e in errors] == ["the device vanished"] and isinstance(errors[0], RecordingError)
    assert sf.info(tmp_path / "r.flac").frames == BLOCK
    source.deliver(block(0.3))  # a late block after the end is not written anywhere
    assert stream.stop() == tmp_path / "r.flac" and sf.info(tmp_path / "r.flac").frames == BLOCK


def test_stopping_from_the_error_callback_ends_the_stream_without_a_traceback(
    tmp_path: Path, monkeypatch
) -> None:
    escaped: list[object] = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    stream: CaptureStream | None = None

    def stop_on_error(error: RecordingError) -> None:
        assert stream is not None
        stream.stop()  # what the app does: from the writer thread itself

    source = HandSource()
    stream = CaptureStream(source, tmp_path / "r.flac", on_error=stop_on_error)
    stream.start()
    source.deliver(block(0.3))
    source.fail(RecordingError("unplugged"))
    assert stream.ended.wait(10)
    wait_for(lambda: not any(t.name == "capture-writer" for t in threading.enumerate()))
    assert escaped == [] and sf.info(tmp_path / "r.flac").frames == BLOCK


def test_a_device_that_will_not_open_leaves_no_file_behind(tmp_path: Path) -> None:
    busy = RecordingError("the input device is busy")
    stream = CaptureStream(HandSource(refuse=busy), tmp_path / "r.flac")
    with pytest.raises(RecordingError) as refused:
        stream.start()
    assert refused.value is busy and stream.error is busy and stream.ended.is_set()
    assert list(tmp_path.iterdir()) == []
    assert stream.stop() == tmp_path / "r.flac"  # the caller's clean-up after a failed start is harmless
    assert list(tmp_path.iterdir()) == []


def test_a_device_that_never_sends_a_block_is_reported_as_unplugged(tmp_path: Path, monkeypatch) -> None:
    escaped: list[object] = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    errors: list[RecordingError] = []
    stream, _ = started(tmp_path / "r.flac", on_error=errors.append, stall_seconds=0.5)
    assert stream.ended.wait(10)
    assert [str(e).split(" for ")[0] for e in errors] == ["no audio from hand source"] and escaped == []
    stream.stop()


def test_a_disk_that_fills_as_the_recording_stops_is_said_and_the_whole_frames_kept_clean(
    tmp_path: Path,
) -> None:
    stream, source = started(tmp_path / "r.flac")
    for n in range(27):  # 43,200 samples: ten whole FLAC frames and 2,240 samples still in the encoder
        source.deliver(block(0.5, n))
    wait_for(lambda: stream.seconds >= 2.7)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, ((tmp_path / "r.flac").stat().st_size + 100, hard))
    try:
        stream.stop()  # the last frame does not fit
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    kept = sf.info(tmp_path / "r.flac").frames
    assert str(stream.error) == (
        "finishing r.flac failed: its end could not be written (is the disk full?); "
        f"the {kept / RATE:.0f} s recorded before it are kept in {tmp_path / 'r.flac'}"
    )
    assert kept == 10 * 4096 and find_partial(tmp_path) == []


def test_stop_writes_every_block_still_queued_before_closing(tmp_path: Path) -> None:
    stream, source = started(tmp_path / "r.flac")
    blocks = [block(0.5, n) for n in range(50)]
    for b in blocks:
        source.deliver(b)
    stream.stop()  # at once: most blocks are still in the queue
    written, _ = sf.read(tmp_path / "r.flac", dtype="float32")
    assert stream.error is None and np.max(np.abs(written - np.concatenate(blocks))) < QUANT


class SlowToStop(HandSource):
    """A device whose stop waits for its buffers (PortAudio's stop can take a buffer's length)."""

    def stop(self) -> None:
        time.sleep(0.6)
        super().stop()


def test_a_device_slow_to_stop_is_not_reported_as_unplugged(tmp_path: Path) -> None:
    errors: list[RecordingError] = []
    source = SlowToStop()
    stream = CaptureStream(source, tmp_path / "r.flac", on_error=errors.append, stall_seconds=0.3)
    stream.start()
    source.deliver(block(0.3))
    stream.stop()  # the stall time passes while the device stops: the user stopped it, it was not unplugged
    assert errors == [] and stream.error is None and sf.info(tmp_path / "r.flac").frames == BLOCK


def test_a_size_limit_mid_recording_ends_it_with_a_clean_file_and_says_how_much_was_kept(
    tmp_path: Path,
) -> None:
    errors: list[RecordingError] = []
    stream, source = started(tmp_path / "r.flac", on_error=errors.append, flush_seconds=1.0)
    for n in range(10):
        source.deliver(block(0.5, n))
    wait_for(lambda: stream.flushed_seconds >= 1.0)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, ((tmp_path / "r.flac").stat().st_size + 10, hard))
    try:
        for n in range(10, 30):
            source.deliver(block(0.5, n))
        assert stream.ended.wait(10)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    [error] = errors
    kept = sf.info(tmp_path / "r.flac").duration
    assert str(error) == ("writing r.flac failed: the file has reached the largest size allowed here; the "
                          f"{kept:.0f} s recorded before it are kept in {tmp_path / 'r.flac'}")  # fmt: skip
    assert 0.7 < kept <= 1.0 and find_partial(tmp_path) == []  # clean at once: nothing to recover later
    stream.stop()
    assert errors == [error] and stream.error is error


def test_a_full_disk_that_cannot_take_a_clean_copy_leaves_the_recording_for_recovery(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk") as disk:
        errors: list[RecordingError] = []
        stream, source = started(disk / "r.flac", on_error=errors.append)
        n = 0
        while not stream.ended.is_set():
            source.deliver(block(0.5, n))
            n += 1
            time.sleep(0.001)
            assert n < 10_000, "the disk never filled"
        [error] = errors
        assert str(error) == (
            f"writing r.flac failed: the disk is full; the recording up to its last save "
            f"({stream.flushed_seconds:.0f} s) is kept in {disk / 'r.flac'}; once there is space again, "
            "`murmur record --recover` or the app's next start makes it whole"
        )
        assert stream.flushed_seconds > 1.0
        assert [p.audio.name for p in find_partial(disk)] == ["r.flac"]
        stream.stop()


def test_a_listener_that_fails_is_let_go_once_and_the_recording_goes_on(tmp_path: Path) -> None:
    source, heard, failures = HandSource(), [], []

    def listener(samples: np.ndarray, at: float) -> None:
        heard.append(at)
        if len(heard) == 3:
            raise ValueError("the live path broke")

    stream = CaptureStream(source, tmp_path / "r.flac", on_block=listener, on_listener_error=failures.append)
    stream.start()
    blocks = [block(0.5, seed) for seed in range(10)]
    for b in blocks:
        source.deliver(b)
    wait_for(lambda: stream.seconds >= 1.0)
    path = stream.stop()
    assert stream.error is None and heard == pytest.approx([0.0, 0.1, 0.2])
    assert [str(f) for f in failures] == ["the live path broke"]
    audio, _ = sf.read(path, dtype="float32")
    np.testing.assert_allclose(audio, np.concatenate(blocks), atol=QUANT)  # every block after it kept


class StuckSource(HandSource):
    """A device that refuses to close (an unplugged USB input)."""

    def stop(self) -> None:
        super().stop()
        raise OSError("the device is busy")


def test_a_device_that_will_not_close_still_gets_its_file_finished_and_its_writer_ended(
    tmp_path: Path,
) -> None:
    source = StuckSource()
    stream = CaptureStream(source, tmp_path / "r.flac")
    stream.start()
    writers = [t for t in threading.enumerate() if t.name == "capture-writer"]
    source.deliver(block(0.5, 1))
    with pytest.raises(OSError, match="the device is busy"):
        stream.stop()
    assert not any(t.is_alive() for t in writers), "the writer thread ran on after the stop"
    assert sf.info(tmp_path / "r.flac").frames == BLOCK, (
        "the block written before the stop is not in the file"
    )
