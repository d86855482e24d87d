"""Odd files decode fully or say what they lost: joined MP3s, chained Ogg, WAVs and compressed files
shorter than their header, several audio streams, samples far beyond ±1, nonsense header durations."""

from __future__ import annotations

import logging
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.audio.blocks import clock
from engine.audio.io import load_audio, probe_duration
from engine.errors import AudioDecodeError

ROOT = Path(__file__).resolve().parents[2]
RATE = 16_000


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-y", "-loglevel", "error", *args], check=True, timeout=60)


def tone(path: Path, hz: int, rate: int, codec: list[str], seconds: float = 5.0) -> Path:
    ffmpeg(
        "-f", "lavfi", "-i", f"sine=frequency={hz}:duration={seconds}:sample_rate={rate}", *codec, str(path)
    )
    return path


def joined(path: Path, *parts: Path) -> Path:
    path.write_bytes(b"".join(p.read_bytes() for p in parts))
    return path


def pitch(samples: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    return float(np.argmax(spectrum) * rate / len(samples))


def test_two_mp3s_joined_byte_wise_are_decoded_to_the_end(tmp_path: Path):
    a = tone(tmp_path / "a.mp3", 440, 44_100, [])
    b = tone(tmp_path / "b.mp3", 660, 44_100, [])
    recording = load_audio(joined(tmp_path / "both.mp3", a, b), RATE)
    assert recording.duration == pytest.approx(10.0, abs=0.2)
    assert pitch(recording.slice(6.0, 9.0), RATE) == pytest.approx(660, abs=5)


def test_a_44k_mp3_joined_with_a_16k_one_keeps_the_second_at_its_own_pitch(tmp_path: Path):
    a = tone(tmp_path / "a.mp3", 440, 44_100, [])
    b = tone(tmp_path / "b.mp3", 660, 16_000, [])
    recording = load_audio(joined(tmp_path / "mixed.mp3", a, b), RATE)
    assert recording.duration == pytest.approx(10.0, abs=0.2)
    assert pitch(recording.slice(1.0, 4.0), RATE) == pytest.approx(440, abs=5)
    assert pitch(recording.slice(6.0, 9.0), RATE) == pytest.approx(660, abs=5)


def test_a_chained_ogg_is_decoded_through_every_link(tmp_path: Path):
    a = tone(tmp_path / "a.ogg", 440, 44_100, ["-c:a", "libvorbis"])
    b = tone(tmp_path / "b.ogg", 660, 44_100, ["-c:a", "libvorbis"])
    recording = load_audio(joined(tmp_path / "chained.ogg", a, b), RATE)
    assert recording.duration == pytest.approx(10.0, abs=0.2)
    assert pitch(recording.slice(6.0, 9.0), RATE) == pytest.approx(660, abs=5)


def _wav(path: Path, seconds: float = 10.0) -> Path:
    t = np.arange(round(seconds * RATE)) / RATE
    sf.write(path, (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), RATE, subtype="PCM_16")
    return path


def _data_size_offset(data: bytes) -> int:
    return data.index(b"data") + 4


def test_a_wav_whose_header_claims_ten_times_its_data_says_only_x_of_y(tmp_path: Path, caplog):
    path = _wav(tmp_path / "claims.wav")
    data = bytearray(path.read_bytes())
    at = _data_size_offset(data)
    size = struct.unpack("<I", data[at : at + 4])[0]
    data[at : at + 4] = struct.pack("<I", size * 10)
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING):
        recording = load_audio(path, RATE)
    assert recording.duration == pytest.approx(10.0, abs=0.01)
    assert "only 0:00:10 of 0:01:40 could be read" in caplog.text


def test_a_wav_cut_off_mid_data_says_only_x_of_y(tmp_path: Path, caplog):
    path = _wav(tmp_path / "cut.wav")
    data = path.read_bytes()
    path.write_bytes(data[: _data_size_offset(data) + 4 + 6 * RATE * 2])  # 6 s of 16-bit samples
    with caplog.at_level(logging.WARNING):
        recording = load_audio(path, RATE)
    assert recording.duration == pytest.approx(6.0, abs=0.05)
    assert "only 0:00:06 of 0:00:10 could be read" in caplog.text


def test_a_whole_wav_gives_no_warning(tmp_path: Path, caplog):
    with caplog.at_level(logging.WARNING):
        load_audio(_wav(tmp_path / "fine.wav"), RATE)
    assert caplog.text == ""


# compressed files cut off: what is there is transcribed, with the same "only X of Y" as a short WAV
CUT_OFF = {
    "mp3": [],  # decoded by FFmpeg
    "m4a": ["-c:a", "aac", "-movflags", "+faststart"],  # index first, so the file still opens
    "mkv": ["-c:a", "libopus"],
    "flac": [],  # libsndfile loses sync where the file ends; FFmpeg decodes on from there
}


@pytest.mark.parametrize("ext", CUT_OFF)
def test_a_compressed_file_cut_off_halfway_is_decoded_as_far_as_it_goes_and_says_only_x_of_y(
    ext: str, tmp_path: Path, caplog
):
    whole = tone(tmp_path / f"whole.{ext}", 440, 44_100, CUT_OFF[ext], seconds=20.0)
    data = whole.read_bytes()
    cut = tmp_path / f"cut.{ext}"
    cut.write_bytes(data[: len(data) // 2])
    with caplog.at_level(logging.WARNING):
        recording = load_audio(cut, RATE)
    assert 7.0 < recording.duration < 12.0
    assert pitch(recording.slice(1.0, recording.duration - 1.0), RATE) == pytest.approx(440, abs=5)
    said = f"'cut.{ext}' ends before its header says: only {clock(recording.duration)} of 0:00:20 could be"
    assert said in caplog.text


def test_a_flac_cut_after_several_blocks_continues_exactly_where_libsndfile_stopped(tmp_path: Path):
    whole = tone(tmp_path / "whole.flac", 440, 44_100, [], seconds=20.0)
    data = whole.read_bytes()
    cut = tmp_path / "cut.flac"
    cut.write_bytes(data[: len(data) * 6 // 10])  # libsndfile reads 65,536-frame blocks, then fails
    full, part = load_audio(whole, RATE).samples, load_audio(cut, RATE).samples
    assert len(part) > 10 * RATE
    end = len(part) - RATE // 100  # the resampler's last few ms differ: the file ends there
    np.testing.assert_array_equal(part[:end], full[:end])  # no gap, no repeat at the hand-over


def test_a_compressed_file_with_nothing_decodable_is_a_clear_error(tmp_path: Path):
    whole = tone(tmp_path / "whole.flac", 440, 44_100, [])
    data = whole.read_bytes()
    header = data[: data.index(b"\xff\xf8")]  # the stream info, up to the first audio frame
    garbage = tmp_path / "garbage.flac"
    garbage.write_bytes(header + np.random.default_rng(0).integers(0, 256, 40_000, dtype=np.uint8).tobytes())
    with pytest.raises(AudioDecodeError, match=r"'garbage.flac' is damaged"):
        load_audio(garbage, RATE)
    mp3 = tone(tmp_path / "whole.mp3", 440, 44_100, [])
    stub = tmp_path / "stub.mp3"
    stub.write_bytes(mp3.read_bytes()[:300])
    with pytest.raises(AudioDecodeError, match=r"'stub.mp3' is not an audio file this app can read"):
        load_audio(stub, RATE)


@pytest.fixture(scope="module")
def two_streams(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An MKV whose first audio stream is silent and whose second (marked default) is a tone."""
    d = tmp_path_factory.mktemp("mkv")
    silent, sound = d / "silent.wav", tone(d / "sound.wav", 440, RATE, [])
    sf.write(silent, np.zeros(5 * RATE, dtype=np.float32), RATE)
    path = d / "two.mkv"
    ffmpeg("-i", str(silent), "-i", str(sound), "-map", "0:a", "-map", "1:a", "-c:a", "flac",
           "-disposition:a:0", "0", "-disposition:a:1", "default", str(path))  # fmt: skip
    return path


def test_the_default_stream_of_a_file_with_several_is_used_and_all_are_named(two_streams: Path, caplog):
    with caplog.at_level(logging.WARNING):
        recording = load_audio(two_streams, RATE)
    assert np.abs(recording.samples).max() > 0.1  # the tone, not the silent first stream
    assert "has 2 audio streams" in caplog.text and "#0" in caplog.text and "#1" in caplog.text
    assert "using #1" in caplog.text and "--audio-stream" in caplog.text


def test_an_audio_stream_can_be_chosen_and_a_missing_one_is_refused(two_streams: Path):
    assert np.abs(load_audio(two_streams, RATE, stream=0).samples).max() == 0.0
    with pytest.raises(AudioDecodeError, match="has no audio stream 5; its audio streams are #0"):
        load_audio(two_streams, RATE, stream=5)


def test_transcribe_takes_audio_stream_and_refuses_a_negative_one(two_streams: Path, tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "engine", "transcribe", str(two_streams), "--out", str(tmp_path), "-q"]
    bad = subprocess.run([*cmd, "--audio-stream", "-1"], env=env, capture_output=True, text=True)
    assert bad.returncode == 1 and "--audio-stream counts a file's audio streams from 0" in bad.stderr
    missing = subprocess.run([*cmd, "--audio-stream", "3"], env=env, capture_output=True, text=True)
    assert missing.returncode == 1 and "has no audio stream 3" in missing.stderr


def test_samples_far_beyond_one_are_scaled_down_not_clipped(tmp_path: Path, caplog):
    t = np.arange(2 * RATE) / RATE
    wave = np.sin(2 * np.pi * 440 * t).astype(np.float32)
    path = tmp_path / "huge.wav"
    sf.write(path, wave * 1e6, RATE, subtype="FLOAT")
    with caplog.at_level(logging.WARNING):
        recording = load_audio(path, RATE)
    assert "beyond the ±1" in caplog.text
    assert np.abs(recording.samples).max() == pytest.approx(1.0, abs=0.01)
    assert np.sqrt(np.mean(recording.samples**2)) == pytest.approx(
        1 / np.sqrt(2), abs=0.02
    )  # a sine, not a square


def test_a_nonsense_header_duration_is_never_printed():
    assert clock(160127986750 * 3600.0) == "an unknown length"
    assert clock(float("nan")) == "an unknown length"
    assert clock(3723.0) == "1:02:03"


def test_probe_of_a_joined_mp3_gives_a_plausible_duration(tmp_path: Path):
    a = tone(tmp_path / "a.mp3", 440, 44_100, [])
    assert 0 < probe_duration(joined(tmp_path / "j.mp3", a, a)) < 11


def test_a_run_on_a_server_sends_the_chosen_stream_not_the_default_one(two_streams: Path):
    from engine.remote.pipeline import RemotePipeline

    chosen = RemotePipeline("http://127.0.0.1:9", audio_stream=0).load(two_streams)  # audio goes up at 16 kHz
    default = RemotePipeline("http://127.0.0.1:9").load(two_streams)
    assert np.abs(chosen.samples).max() == 0.0 and np.abs(default.samples).max() > 0.1
