"""The recording file itself: its name, its marker, when audio reaches the disk, and what a full
disk or a file-size limit leaves behind (every case on a real file; the limits are real
`RLIMIT_FSIZE` limits and, where the tests may mount one, a real full tmpfs)."""

from __future__ import annotations

import json
import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.errors import RecordingError
from engine.live.flac_writer import FlacWriter, marker_path, new_recording_path
from engine.live.recovery import find_partial, recover
from tests.engine.live.conftest import small_tmpfs

RATE = 16000
FRAME = 4096  # samples per FLAC frame: libsndfile writes whole frames as they fill


def noise(samples: int, seed: int = 0) -> np.ndarray:
    """Audio that FLAC cannot shrink much, so every frame costs real bytes on disk."""
    return (np.random.default_rng(seed).standard_normal(samples) * 0.2).astype(np.float32)


@contextmanager
def file_size_limit(size: int) -> Iterator[None]:
    """Writes beyond `size` bytes fail with EFBIG while inside (Python ignores SIGXFSZ)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_recording_is_named_for_the_local_time_it_started_in_a_folder_made_for_it(tmp_path: Path) -> None:
    now = 1767261845.0
    folder = tmp_path / "not" / "yet"
    previous = os.umask(0o022)
    try:
        path = new_recording_path(folder, now)
    finally:
        os.umask(previous)
    assert path == folder / datetime.fromtimestamp(now).strftime("recording-%Y%m%d-%H%M%S.flac")
    assert path.stat().st_size == 0  # claimed, empty, for the writer
    assert path.stat().st_mode & 0o777 == 0o644  # readable by the user's other programs, not executable


def test_a_folder_that_cannot_be_made_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "a file").write_text("x")
    folder = tmp_path / "a file" / "recordings"
    with pytest.raises(RecordingError) as refused:
        new_recording_path(folder)
    assert str(refused.value) == f"cannot write a recording into {folder}: Not a directory"


def test_the_marker_names_the_file_its_rate_its_device_and_when_it_started(tmp_path: Path) -> None:
    path = tmp_path / "new" / "folder" / "r.flac"
    before = datetime.now().astimezone().replace(microsecond=0)
    writers = [FlacWriter(path, 48000, device="USB microphone"), FlacWriter(tmp_path / "plain.flac", RATE)]
    details = [json.loads(marker_path(w.path).read_text()) for w in writers]
    started = [datetime.strptime(d.pop("started"), "%Y-%m-%dT%H:%M:%S%z") for d in details]
    assert details == [{"audio": "r.flac", "sample_rate": 48000, "device": "USB microphone"},
                       {"audio": "plain.flac", "sample_rate": RATE, "device": ""}]  # fmt: skip
    assert all(before <= s <= datetime.now().astimezone() for s in started)
    for writer in writers:
        writer.write(noise(100))
        writer.close()


def test_audio_reaches_the_disk_once_a_whole_flush_interval_is_pending_and_not_before(tmp_path: Path) -> None:
    writer = FlacWriter(tmp_path / "r.flac", RATE, flush_seconds=0.5)  # every 8,000 samples
    seen = []
    for samples in (7999, 1, 7999, 1, 4000):
        writer.write(noise(samples))
        seen.append(writer.flushed_frames)
    assert seen == [0, 8000, 8000, 16000, 16000]
    assert writer.seconds == 20000 / RATE
    writer.close()
    assert writer.flushed_frames == 20000 and sf.info(tmp_path / "r.flac").frames == 20000


@pytest.mark.parametrize("seconds", [0.0, -1.0, 2.001])
def test_a_flush_interval_outside_zero_to_two_seconds_is_refused(tmp_path: Path, seconds: float) -> None:
    with pytest.raises(ValueError, match=r"flush interval must be in \(0, 2\] s"):
        FlacWriter(tmp_path / "r.flac", RATE, flush_seconds=seconds)
    FlacWriter(tmp_path / "ok.flac", RATE, flush_seconds=2.0).close()


def test_writing_after_close_is_refused_by_name_and_a_second_close_changes_nothing(tmp_path: Path) -> None:
    writer = FlacWriter(tmp_path / "r.flac", RATE)
    writer.write(noise(RATE))
    writer.close()
    writer.close()
    with pytest.raises(RecordingError, match=r"^the recording r\.flac is already closed$"):
        writer.write(noise(10))
    assert sf.info(tmp_path / "r.flac").frames == RATE


def test_a_marker_removed_by_hand_while_recording_does_not_spoil_the_close(tmp_path: Path) -> None:
    writer = FlacWriter(tmp_path / "r.flac", RATE)
    writer.write(noise(RATE))
    marker_path(writer.path).unlink()
    writer.close()
    assert sf.info(tmp_path / "r.flac").frames == RATE


def test_a_recording_deleted_while_it_is_made_is_not_reported_as_finished(tmp_path: Path) -> None:
    writer = FlacWriter(tmp_path / "r.flac", RATE)
    writer.write(noise(RATE))
    writer.path.unlink()  # someone tidies the folder mid-meeting
    with pytest.raises(RecordingError, match=r"^finishing r\.flac failed"):
        writer.close()
    assert writer.failed


def test_a_sample_rate_flac_cannot_hold_is_refused_in_libsndfiles_words_and_leaves_no_marker(
    tmp_path: Path,
) -> None:
    with pytest.raises(RecordingError) as refused:
        FlacWriter(tmp_path / "r.flac", 1_000_000)
    assert str(refused.value).startswith(f"cannot write the recording {tmp_path / 'r.flac'}: Error opening")
    assert str(refused.value).endswith(": Error : flac does not support this sample rate.")
    assert find_partial(tmp_path) == []  # not offered later as a recording cut short


def test_a_size_limit_mid_recording_is_named_and_the_file_kept_for_recovery(tmp_path: Path) -> None:
    files = open_files()
    writer = FlacWriter(tmp_path / "r.flac", RATE)
    writer.write(noise(RATE))
    writer.flush()
    with file_size_limit(writer.path.stat().st_size + 10), pytest.raises(RecordingError) as failed:
        writer.write(noise(RATE, seed=1))
    assert str(failed.value) == "writing r.flac failed: the file has reached the largest size allowed here"
    assert writer.failed
    writer.close()  # only lets go of the file: its end is somewhere after the last flush
    assert open_files() == files  # neither libsndfile's handle nor the one kept for fsync is left open
    [partial] = find_partial(tmp_path)
    assert RATE - FRAME <= recover(partial) * RATE <= RATE  # the flushed second, less the frame being filled


def test_a_disk_that_fills_as_the_recording_is_closed_keeps_it_for_recovery(tmp_path: Path) -> None:
    writer = FlacWriter(tmp_path / "r.flac", RATE)
    writer.write(noise(4 * FRAME + 1000))  # four whole frames on disk, 1,000 samples in the encoder
    writer.flush()
    with file_size_limit(writer.path.stat().st_size + 100), pytest.raises(RecordingError) as failed:
        writer.close()  # the last frame does not fit; libsndfile itself reports nothing
    assert str(failed.value) == "finishing r.flac failed: its end could not be written (is the disk full?)"
    assert writer.failed and marker_path(writer.path).exists()
    [partial] = find_partial(tmp_path)
    assert recover(partial) * RATE == 4 * FRAME  # the whole frames, as a clean file
    assert sf.info(tmp_path / "r.flac").frames == 4 * FRAME


def test_a_full_disk_is_said_in_words_and_what_was_flushed_stays(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk") as disk:
        writer = FlacWriter(disk / "r.flac", RATE)
        with pytest.raises(RecordingError) as failed:
            for _ in range(100):  # 10 s of noise: well over the 256 kB disk
                writer.write(noise(RATE // 10))
        assert str(failed.value) == "writing r.flac failed: the disk is full"
        assert writer.failed and writer.flushed_frames > 0
        writer.close()
        assert marker_path(disk / "r.flac").exists()
