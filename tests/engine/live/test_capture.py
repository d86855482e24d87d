"""The capture stream fed from a file through the same path as a microphone: file, pause, failures."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.errors import RecordingError
from engine.live.capture import CaptureStream
from engine.live.flac_writer import marker_path
from engine.live.sources import BLOCK_SECONDS, NO_MICROPHONE, FileSource, MicSource, list_devices


def record(source: FileSource, path: Path, **kwargs: object) -> CaptureStream:
    stream = CaptureStream(source, path, **kwargs)  # type: ignore[arg-type]
    stream.start()
    assert stream.ended.wait(60)
    stream.stop()
    return stream


def test_the_file_holds_exactly_the_audio_that_arrived(clip: Path, tmp_path: Path) -> None:
    blocks: list[float] = []
    stream = record(FileSource(clip, speed=20), tmp_path / "r.flac", on_block=lambda b, at: blocks.append(at))
    written, rate = sf.read(tmp_path / "r.flac", dtype="float32")
    source, _ = sf.read(clip, dtype="float32")
    assert rate == 16000 and len(written) == len(source)
    assert np.max(np.abs(written - source)) < 2 / 32768
    assert stream.error is None and not marker_path(tmp_path / "r.flac").exists()
    assert blocks == sorted(blocks) and blocks[0] == 0.0  # listeners see every block, in order


class Counted(FileSource):
    """A file source that counts the seconds it has delivered."""

    delivered = 0.0

    def start(self, deliver, fail) -> None:
        def counting(block: np.ndarray) -> None:
            self.delivered += len(block) / self.sample_rate
            deliver(block)

        super().start(counting, fail)


def wait_for(condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_paused_audio_is_not_recorded(clip: Path, tmp_path: Path) -> None:
    source = Counted(clip, speed=4)
    stream = CaptureStream(source, tmp_path / "r.flac")
    stream.start()
    wait_for(lambda: source.delivered >= 2.0)
    stream.pause()
    paused_at = source.delivered
    wait_for(lambda: source.delivered >= paused_at + 8.0)  # eight seconds of the clip while paused
    assert stream.paused
    stream.resume()
    skipped = source.delivered - paused_at
    assert stream.ended.wait(120)
    stream.stop()
    recorded = sf.info(tmp_path / "r.flac").duration
    assert recorded == pytest.approx(source.delivered - skipped, abs=2 * BLOCK_SECONDS)  # a block in flight


def test_a_source_failing_mid_recording_keeps_what_was_recorded(clip: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.flac"
    data = bytearray(clip.read_bytes())
    data[len(data) // 2 :] = bytes(len(data) - len(data) // 2)  # the second half: zeros
    damaged.write_bytes(bytes(data))
    errors: list[RecordingError] = []
    stream = record(FileSource(damaged, speed=20), tmp_path / "r.flac", on_error=errors.append)
    assert len(errors) == 1 and stream.error is errors[0]
    assert "stopped" in str(errors[0])
    kept = sf.info(tmp_path / "r.flac").duration
    assert 5.0 < kept < 26.0  # the first part is a complete, closed file
    assert not marker_path(tmp_path / "r.flac").exists()


def test_a_device_that_stops_delivering_is_reported_as_unplugged(clip: Path, tmp_path: Path) -> None:
    source = FileSource(clip, speed=0.001)  # the first block, then nothing for a long time
    errors: list[RecordingError] = []
    stream = CaptureStream(source, tmp_path / "r.flac", on_error=errors.append, stall_seconds=1.0)
    stream.start()
    assert stream.ended.wait(10)
    stream.stop()
    assert errors and "unplugged" in str(errors[0])
    assert sf.info(tmp_path / "r.flac").frames == 1600  # the block that arrived is kept


def test_a_device_that_does_not_exist_will_not_open() -> None:
    with pytest.raises(RecordingError, match="input device"):
        MicSource(987654)


def test_no_microphone_at_all_is_a_sentence_not_a_portaudio_code() -> None:
    if list_devices():
        pytest.skip("this machine has an input device")
    with pytest.raises(RecordingError) as caught:
        MicSource()
    assert str(caught.value) == NO_MICROPHONE
    assert "querying device" not in str(caught.value) and "-1" not in str(caught.value)
