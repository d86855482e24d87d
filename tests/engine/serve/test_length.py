"""An upload's length measured by decoding it (`engine.serve.length`), and decoder messages put in
the client's words."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.errors import AudioDecodeError
from engine.serve.length import TooLong, client_text, decode_failure, measure


def ffmpeg(*args: str) -> bytes:
    return subprocess.run(["ffmpeg", "-v", "error", *args], check=True, capture_output=True).stdout


@pytest.fixture(scope="module")
def unstated(tmp_path_factory) -> Path:
    """Ten minutes of Opus in WebM written to a pipe: its header states no length (a browser's)."""
    folder = tmp_path_factory.mktemp("webm")
    minute = folder / "minute.webm"
    tone = "sine=frequency=300:sample_rate=48000:duration=60"
    opus = ("-ac", "1", "-c:a", "libopus", "-b:a", "6k", "-f", "webm", "pipe:1")
    minute.write_bytes(ffmpeg("-f", "lavfi", "-i", tone, *opus))
    path = folder / "ten.webm"
    path.write_bytes(ffmpeg("-stream_loop", "9", "-i", str(minute), "-c", "copy", "-f", "webm", "pipe:1"))
    return path


def test_a_file_stating_no_length_is_measured_to_its_end(unstated):
    assert measure(unstated, 3600.0) == pytest.approx(600.0, abs=0.1)


def test_decoding_stops_with_too_long_just_past_the_limit(unstated):
    with pytest.raises(TooLong, match=r"^the recording is longer than this server's limit of 0.05 hours$"):
        measure(unstated, 180.0)
    assert measure(unstated, 600.1) == pytest.approx(600.0, abs=0.1)  # a file of the limit is taken


def test_a_recording_exactly_as_long_as_the_limit_is_taken(tmp_path):
    wav = tmp_path / "five.wav"
    sf.write(wav, np.zeros(16000 * 5, np.float32), 16000, subtype="PCM_16")
    seconds = measure(wav, 3600.0)
    assert seconds == pytest.approx(5.0, abs=1e-9)
    assert measure(wav, seconds) == seconds  # refused only past the limit, never at it


def test_several_audio_streams_are_measured_by_the_default_one_and_leave_the_warning_to_the_job(
    tmp_path, caplog
):
    """The job's own decode warns (its client reads it); measuring must not say it a second time."""
    short, long = tmp_path / "short.wav", tmp_path / "long.wav"
    sf.write(short, np.zeros(16000 * 2, np.float32), 16000)
    sf.write(long, np.full(16000 * 7, 0.1, np.float32), 16000)
    both = tmp_path / "upload-x.mka"
    ffmpeg("-i", str(short), "-i", str(long), "-map", "0:a", "-map", "1:a", "-c:a", "flac",
           "-disposition:a:0", "0", "-disposition:a:1", "default", str(both))  # fmt: skip
    with caplog.at_level(logging.DEBUG):
        seconds = measure(both, 3600.0)
    assert seconds == pytest.approx(7.0, abs=0.01)  # the default stream, the second
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_a_wav_whose_header_claims_more_than_it_holds_is_measured_by_its_samples(tmp_path):
    cut = tmp_path / "cut.wav"
    sf.write(cut, np.zeros(16000 * 20, np.float32), 16000, subtype="PCM_16")
    cut.write_bytes(cut.read_bytes()[: 44 + 2 * 16000 * 5])
    assert measure(cut, 3600.0) == pytest.approx(5.0, abs=0.01)


def test_what_is_not_audio_is_an_audio_decode_error(tmp_path):
    junk = tmp_path / "upload-abc.webm"
    junk.write_bytes(b"\x1aE\xdf\xa3" + bytes(range(256)) * 40)
    with pytest.raises(AudioDecodeError) as failure:
        measure(junk, 3600.0)
    assert decode_failure(failure.value, junk, "notes.webm") == (
        "'notes.webm' is not an audio file this server can read"
    )
    assert decode_failure(failure.value, junk, "") == "the file is not an audio file this server can read"


def test_messages_name_the_clients_file_and_drop_the_decoders_reason():
    path = Path("/tmp/murmur-serve-x/upload-k3j.mp3")
    damaged = AudioDecodeError("'upload-k3j.mp3' is damaged: decoding failed at 0:01:02 (Invalid data found)")
    assert decode_failure(damaged, path, "talk.mp3") == "'talk.mp3' is damaged: decoding failed at 0:01:02"
    warning = "'upload-k3j.mp3' ends before its header says: only 0:00:05 of 0:00:20 could be read (the rest)"
    assert client_text(warning, path, "talk.mp3") == warning.replace("upload-k3j.mp3", "talk.mp3")
    assert client_text("see upload-k3j.mp3 here", path, "") == "see the file here"
    assert client_text("nothing to change", None, "talk.mp3") == "nothing to change"
    assert decode_failure(AudioDecodeError("(kept) all of it"), path, "x") == "(kept) all of it"
