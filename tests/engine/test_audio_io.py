"""Decoding files into mono recordings: every supported format, downmixing, and every bad-file case."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.audio.io import SUPPORTED_EXTENSIONS, load_audio, probe_duration
from engine.errors import AudioDecodeError, Cancelled

RATE = 44100
SECONDS = 2.0
LEFT, RIGHT = 0.6, 0.2  # a 440 Hz tone at different levels per channel: the mono mix has amplitude 0.4
MONO_AMP = (LEFT + RIGHT) / 2

needs_ffmpeg = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs the ffmpeg binary")


def stereo_tone(rate: int = RATE, seconds: float = SECONDS) -> np.ndarray:
    t = np.arange(round(rate * seconds)) / rate
    s = np.sin(2 * np.pi * 440.0 * t)
    return np.stack([LEFT * s, RIGHT * s], axis=1).astype(np.float32)  # (frames, 2)


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-y", "-loglevel", "error", *args], check=True, timeout=60)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("audio")
    x = stereo_tone()
    made = {"wav": d / "tone.wav", "flac": d / "tone.flac", "ogg": d / "tone.ogg", "mp3": d / "tone.mp3"}
    sf.write(made["wav"], x, RATE, subtype="PCM_16")
    sf.write(made["flac"], x, RATE)
    sf.write(made["ogg"], x, RATE, format="OGG", subtype="VORBIS")
    sf.write(made["mp3"], x, RATE, format="MP3", subtype="MPEG_LAYER_III")
    if shutil.which("ffmpeg"):
        src = str(made["wav"])
        for ext, codec in [("m4a", "aac"), ("opus", "libopus"), ("webm", "libopus"), ("mkv", "libvorbis")]:
            made[ext] = d / f"tone.{ext}"
            ffmpeg("-i", src, "-c:a", codec, str(made[ext]))
        made["m4a_index_first"] = d / "streamable.m4a"
        ffmpeg("-i", src, "-c:a", "aac", "-movflags", "+faststart", str(made["m4a_index_first"]))
        video = ["-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=2"]
        made["mp4"] = d / "talk.mp4"
        ffmpeg(*video, "-i", src, "-c:v", "mpeg4", "-c:a", "aac", "-shortest", str(made["mp4"]))
        made["silent_video"] = d / "screen.mp4"
        ffmpeg(*video, "-c:v", "mpeg4", str(made["silent_video"]))
    return made


def peak_hz(x: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return float(np.argmax(spectrum) * rate / len(x))


def amplitude(x: np.ndarray, rate: int) -> float:
    """Sine amplitude from the RMS of the middle of the signal (codec edges excluded)."""
    mid = x[rate // 5 : -rate // 5]
    return float(np.sqrt(2 * np.mean(np.square(mid, dtype=np.float64))))


LOSSLESS = ["wav", "flac"]
LOSSY = ["ogg", "mp3"]
FFMPEG_ONLY = ["m4a", "opus", "webm", "mkv", "mp4"]


@pytest.mark.parametrize("fmt", LOSSLESS + LOSSY + [pytest.param(f, marks=needs_ffmpeg) for f in FFMPEG_ONLY])
@pytest.mark.parametrize("target", [16000, 24000])
def test_every_format_decodes_to_mono_with_pitch_level_and_length_intact(
    files: dict[str, Path], fmt: str, target: int
) -> None:
    rec = load_audio(files[fmt], target)
    assert rec.sample_rate == target and rec.source == files[fmt]
    assert rec.samples.dtype == np.float32 and rec.samples.ndim == 1
    assert rec.duration == pytest.approx(SECONDS, abs=0.05)
    assert peak_hz(rec.samples, target) == pytest.approx(440.0, abs=1.0)
    tolerance_db = 0.05 if fmt in LOSSLESS else 0.5
    level_db = 20 * np.log10(amplitude(rec.samples, target) / MONO_AMP)
    assert abs(level_db) < tolerance_db  # channels averaged: not summed (+6 dB), not the 0.707 rule


def test_opposite_channels_cancel_when_mixed_to_mono(tmp_path: Path) -> None:
    t = np.arange(RATE) / RATE
    hum, voice = np.sin(2 * np.pi * 100 * t), 0.3 * np.sin(2 * np.pi * 1000 * t)
    path = tmp_path / "phase.flac"
    sf.write(path, np.stack([0.5 * hum + voice, -0.5 * hum + voice], axis=1), RATE, subtype="PCM_24")
    rec = load_audio(path, 16000)
    assert peak_hz(rec.samples, 16000) == pytest.approx(1000.0, abs=1.0)
    assert amplitude(rec.samples, 16000) == pytest.approx(0.3, rel=0.01)


def test_same_rate_mono_file_is_returned_sample_for_sample(tmp_path: Path) -> None:
    x = np.random.default_rng(1).uniform(-0.9, 0.9, 20000).astype(np.float32)
    path = tmp_path / "mono.wav"
    sf.write(path, x, 16000, subtype="FLOAT")
    assert np.array_equal(load_audio(path, 16000).samples, x)


@needs_ffmpeg
def test_mislabelled_file_is_still_decoded(files: dict[str, Path], tmp_path: Path) -> None:
    wrong = tmp_path / "really_aac.wav"
    shutil.copy(files["m4a"], wrong)
    assert load_audio(wrong, 16000).duration == pytest.approx(SECONDS, abs=0.05)


def test_progress_reaches_the_total_and_cancel_stops_decoding(files: dict[str, Path]) -> None:
    seen: list[tuple[float, float]] = []
    load_audio(files["flac"], 16000, progress=lambda done, total: seen.append((done, total)))
    assert len(seen) >= 2 and seen[-1] == pytest.approx((SECONDS, SECONDS))
    assert all(a[0] < b[0] for a, b in itertools.pairwise(seen))

    cancel = threading.Event()
    with pytest.raises(Cancelled):
        load_audio(files["flac"], 16000, progress=lambda *_: cancel.set(), cancel=cancel)


@pytest.mark.parametrize("fmt", ["wav", "flac", "mp3", pytest.param("m4a", marks=needs_ffmpeg)])
def test_probe_duration_reads_the_header(files: dict[str, Path], fmt: str) -> None:
    assert probe_duration(files[fmt]) == pytest.approx(SECONDS, abs=0.05)


def _cut(source: str, keep: float) -> Callable[[Path, dict[str, Path]], None]:
    """Write the first `keep` of a fixture: a fraction, or a byte count when above 1."""

    def make(path: Path, files: dict[str, Path]) -> None:
        data = files[source].read_bytes()
        path.write_bytes(data[: round(keep if keep > 1 else len(data) * keep)])

    return make


# kind: (file name, how to make it from the fixtures, what the message must say)
BAD_FILES: dict[str, tuple[str, Callable[[Path, dict[str, Path]], object], str]] = {
    "missing": ("gone.wav", lambda p, f: None, "was not found"),
    "folder": ("recordings.wav", lambda p, f: p.mkdir(), "is a folder, not an audio file"),
    "empty": ("empty.wav", lambda p, f: p.touch(), "is empty (0 bytes)"),
    "zero_length": (
        "silence.wav",
        lambda p, f: sf.write(p, np.zeros((0, 2), np.float32), RATE),
        "contains no audio",
    ),
    "text": ("notes.wav", lambda p, f: p.write_text("Meeting notes\n- budget\n"), "is not an audio file"),
    "cut_header": ("header.wav", _cut("wav", 40), "is not an audio file this app can read"),
    "unsupported": ("scan.xyz", lambda p, f: p.write_bytes(bytes(range(256)) * 20), "not a supported format"),
    # the mp4 index (moov atom) sits at the end of the file, so a cut file cannot be opened at all
    "cut_m4a_no_index": ("download.m4a", _cut("m4a", 0.1), "is not an audio file this app can read"),
    "no_audio_track": ("screen.mp4", lambda p, f: shutil.copy(f["silent_video"], p), "has no audio track"),
}
FFMPEG_MADE = {"cut_m4a_no_index", "no_audio_track"}


@pytest.mark.parametrize(
    "kind", [pytest.param(k, marks=needs_ffmpeg) if k in FFMPEG_MADE else k for k in BAD_FILES]
)
def test_bad_file_raises_one_clear_error(kind: str, tmp_path: Path, files: dict[str, Path]) -> None:
    name, make, expected = BAD_FILES[kind]
    path = tmp_path / name
    make(path, files)
    with pytest.raises(AudioDecodeError) as caught:
        load_audio(path, 16000)
    assert type(caught.value) is AudioDecodeError
    assert str(caught.value).startswith(f"'{name}' ") and expected in str(caught.value)
    if kind != "zero_length":  # its header is valid: only decoding finds out
        with pytest.raises(AudioDecodeError, match=re.escape(expected)):
            probe_duration(path)


def test_a_flac_with_no_whole_frame_names_the_time_it_broke(files: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "cut.flac"
    data = files["flac"].read_bytes()
    path.write_bytes(data[: data.index(b"\xff\xf8") + 100])  # the stream info and a piece of one frame
    with pytest.raises(AudioDecodeError, match=r"'cut.flac' is damaged: decoding failed at 0:00:00"):
        load_audio(path, 16000)


def test_supported_extensions_cover_common_audio_and_video() -> None:
    assert {".wav", ".flac", ".mp3", ".ogg", ".m4a", ".mp4", ".webm", ".opus", ".mkv"} <= SUPPORTED_EXTENSIONS
    assert all(ext.startswith(".") and ext == ext.lower() for ext in SUPPORTED_EXTENSIONS)


@pytest.mark.parametrize(
    ("rate", "stream", "said"),
    [
        (0, None, "sample_rate must be a positive whole number of Hz, got 0"),
        (-16000, None, "sample_rate must be a positive whole number of Hz, got -16000"),
        (16000.5, None, "sample_rate must be a positive whole number of Hz, got 16000.5"),
        (16000, -1, "audio stream must be a stream number from 0, got -1"),
        (16000, 1.5, "audio stream must be a stream number from 0, got 1.5"),
    ],
)
def test_a_rate_or_stream_that_cannot_be_is_refused_before_the_file_is_read(
    rate, stream, said, tmp_path
) -> None:
    # catches: `or` turned into `and` or a bound moved by one, letting a half stream or a zero rate through
    path = tmp_path / "one.wav"
    sf.write(path, np.zeros(16000, np.float32), 16000)
    with pytest.raises(ValueError) as refused:
        load_audio(path, rate, stream=stream)
    assert str(refused.value) == said
    assert len(load_audio(path, 1).samples) == 1  # one hertz is a rate, if an odd one
