"""Recordings left cut short (a kill, a crash, a full disk): found, made whole, or refused as they are.

A "crash" here is a `FlacWriter` flushed and then copied away with its marker before it is closed:
the bytes on disk are exactly what a killed recorder leaves (the killed-process test itself is in
`test_recorder_crash.py`). The audio is the demo meeting's, so a wrong scale or a lost piece shows.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.errors import RecordingError
from engine.live.flac_writer import FlacWriter, marker_path
from engine.live.recovery import PartialRecording, discard, find_partial, recover
from tests.engine.live.conftest import DEMO

QUANT = 2 / 32768  # 16-bit FLAC
FRAME = 4096  # samples per FLAC frame
SECONDS = 12 * FRAME / 16000  # 3.072 s recorded and flushed
ON_DISK = (SECONDS - FRAME / 16000, SECONDS)  # a flush may leave one frame in libsndfile's encoder


def on_disk(seconds: float) -> bool:
    return ON_DISK[0] <= seconds <= ON_DISK[1]


def speech(seconds: float) -> np.ndarray:
    samples, _ = sf.read(DEMO, dtype="float32", frames=round(seconds * 16000))
    return samples


def cut_short(folder: Path, name: str, seconds: float = SECONDS) -> Path:
    """A recording of `seconds` of speech, flushed but never closed, left in `folder` as a kill leaves it."""
    live = folder / "live" / name
    writer = FlacWriter(live, 16000, device="a microphone")
    writer.write(speech(seconds))
    writer.flush()
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(live, folder / name)
    shutil.copyfile(marker_path(live), marker_path(folder / name))
    writer.close()
    shutil.rmtree(folder / "live")
    return folder / name


def left_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_cut_short_recording_is_found_with_its_start_and_size_and_made_whole(tmp_path: Path) -> None:
    path = cut_short(tmp_path, "meeting.flac")
    started = json.loads(marker_path(path).read_text())["started"]
    assert find_partial(tmp_path) == [PartialRecording(path, marker_path(path), started, path.stat().st_size)]
    kept = recover(find_partial(tmp_path)[0])
    audio, rate = sf.read(path, dtype="float32")  # a clean FLAC now, of exactly the seconds said
    assert on_disk(kept) and rate == 16000 and len(audio) == round(kept * 16000)
    assert np.allclose(audio, speech(SECONDS)[: len(audio)], atol=QUANT)
    assert left_in(tmp_path) == ["meeting.flac"] and find_partial(tmp_path) == []


def test_a_file_cut_inside_a_frame_keeps_the_speech_before_the_cut(tmp_path: Path) -> None:
    path = cut_short(tmp_path, "meeting.flac")
    os.truncate(path, path.stat().st_size * 6 // 10)
    kept = recover(path)
    audio, _ = sf.read(path, dtype="float32")
    assert 1.0 < kept < ON_DISK[0] and len(audio) == round(kept * 16000)
    assert np.allclose(audio, speech(SECONDS)[: len(audio)], atol=QUANT)
    assert not marker_path(path).exists()


@pytest.mark.parametrize("subtype", ["PCM_16", "PCM_24", "FLOAT"])
def test_any_sample_format_is_recovered_at_its_own_loudness(tmp_path: Path, subtype: str) -> None:
    path = tmp_path / ("other.wav" if subtype == "FLOAT" else "other.flac")
    sf.write(path, speech(2.0), 16000, subtype=subtype)
    assert recover(path) == 2.0
    audio, rate = sf.read(path, dtype="float32")
    assert rate == 16000 and np.allclose(audio, speech(2.0), atol=QUANT)


def test_a_recording_with_no_audio_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    empty = cut_short(tmp_path, "empty.flac", seconds=0.1)  # less than a frame: only the header is on disk
    before = empty.read_bytes()
    with pytest.raises(RecordingError) as refused:
        recover(empty)
    assert str(refused.value) == "empty.flac holds no audio that can be recovered"
    assert empty.read_bytes() == before and marker_path(empty).exists()
    assert left_in(tmp_path) == ["empty.flac", "empty.flac.recording.json"]


@pytest.mark.parametrize("name", ["notes.flac", "notes.dat"])  # opened as a FLAC without a rate; not opened
def test_a_file_that_is_not_audio_is_refused_in_its_own_words(tmp_path: Path, name: str) -> None:
    notes = tmp_path / name
    notes.write_bytes(b"\0meeting notes, not a recording" * 20)
    with pytest.raises(RecordingError) as refused:
        recover(notes)
    assert str(refused.value) == f"{name} cannot be read as a recording"
    assert notes.read_bytes() == b"\0meeting notes, not a recording" * 20


def test_a_disk_still_full_when_recovering_keeps_the_cut_short_file_and_its_marker(tmp_path: Path) -> None:
    path = cut_short(tmp_path, "meeting.flac")
    before = path.read_bytes()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) // 2, hard))  # writes beyond it fail (EFBIG)
    try:
        with pytest.raises(RecordingError, match="the file has reached the largest size allowed here"):
            recover(find_partial(tmp_path)[0])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert path.read_bytes() == before
    assert left_in(tmp_path) == ["meeting.flac", "meeting.flac.recording.json"]  # no half-written copy
    assert on_disk(recover(find_partial(tmp_path)[0]))  # once there is room, it recovers


def test_a_disk_too_full_to_start_the_clean_copy_keeps_the_cut_short_file(tmp_path: Path) -> None:
    path = cut_short(tmp_path, "meeting.flac")
    before = path.read_bytes()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (10, hard))  # not even the copy's marker can be written
    try:
        with pytest.raises(RecordingError, match="the file has reached the largest size allowed here"):
            recover(path)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert path.read_bytes() == before
    assert left_in(tmp_path) == ["meeting.flac", "meeting.flac.recording.json"]


def test_markers_without_audio_or_with_unreadable_details_are_handled(tmp_path: Path) -> None:
    assert find_partial(tmp_path / "never made") == []
    (tmp_path / "gone.flac.recording.json").write_text("{}")  # its recording was deleted
    for name, details in [("garbled.flac", "{not json"), ("listed.flac", "[1, 2]"), ("plain.flac", "{}")]:
        (tmp_path / name).write_bytes(b"fLaC")
        marker_path(tmp_path / name).write_text(details)
    found = {p.audio.name: p.started for p in find_partial(tmp_path)}
    assert found == {"garbled.flac": "", "listed.flac": "", "plain.flac": ""}


def test_the_newest_is_offered_first_and_discarding_keeps_the_audio(tmp_path: Path) -> None:
    for name, age in [("b.flac", 100), ("c.flac", 200), ("a.flac", 0)]:
        path = cut_short(tmp_path, name, seconds=0.5)
        os.utime(marker_path(path), (1e9 - age, 1e9 - age))
    partial = find_partial(tmp_path)
    assert [p.audio.name for p in partial] == ["a.flac", "b.flac", "c.flac"]
    discard(partial[0])
    discard(partial[0])  # offered twice (two windows), declined twice: no error
    assert [p.audio.name for p in find_partial(tmp_path)] == ["b.flac", "c.flac"]
    assert (tmp_path / "a.flac").stat().st_size == partial[0].size
