"""Files with several audio streams, as the stream menu and `--audio-stream` see them: each stream's
label word for word, which one is used when none is chosen, and the exact refusals and warnings."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.audio.io import audio_streams, load_audio, probe_duration
from engine.errors import AudioDecodeError
from engine.testing.streams import mux_audio

RATE = 16_000
LABELS = ("#0 (eng, Interview, 2 ch, 48000 Hz)", "#1 (deu, 1 ch, 16000 Hz, default)")


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-y", "-loglevel", "error", *args], check=True, timeout=60)


def tone(path: Path, hz: float, rate: int, channels: int, seconds: float = 2.0) -> Path:
    t = np.arange(int(seconds * rate)) / rate
    wave = (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)
    sf.write(path, np.repeat(wave[:, None], channels, axis=1), rate)
    return path


@pytest.fixture(scope="module")
def tagged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An MKV: #0 English, titled, stereo 48 kHz at 440 Hz; #1 German, mono 16 kHz at 660 Hz, default."""
    d = tmp_path_factory.mktemp("tagged")
    first, second = tone(d / "a.wav", 440, 48_000, 2), tone(d / "b.wav", 660, RATE, 1)
    path = d / "talk.mkv"
    ffmpeg("-i", str(first), "-i", str(second), "-map", "0:a", "-map", "1:a", "-c:a", "flac",
           "-metadata:s:a:0", "language=eng", "-metadata:s:a:0", "title=Interview",
           "-metadata:s:a:1", "language=deu", "-disposition:a:0", "0", "-disposition:a:1", "default",
           str(path))  # fmt: skip
    return path


def pitch(samples: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    return float(np.argmax(spectrum) * RATE / len(samples))


def test_each_audio_stream_is_labelled_with_its_language_title_channels_rate_and_default(tagged: Path):
    assert audio_streams(tagged) == (LABELS, 1)
    assert probe_duration(tagged) == pytest.approx(2.0, abs=0.01)  # the default stream's length


def test_the_default_stream_is_used_and_the_warning_names_every_stream_and_how_to_choose(
    tagged: Path, caplog
):
    with caplog.at_level(logging.WARNING, logger="engine.audio.io"):
        recording = load_audio(tagged, RATE)
    assert pitch(recording.samples) == pytest.approx(660, abs=5)
    assert caplog.messages == [
        f"'talk.mkv' has 2 audio streams: {', '.join(LABELS)}; using #1"
        " (choose another with --audio-stream N)"
    ]


def test_a_stream_just_past_the_last_is_refused_naming_those_there_are(tagged: Path):
    with pytest.raises(AudioDecodeError) as refused:
        load_audio(tagged, RATE, stream=2)
    assert (
        str(refused.value) == f"'talk.mkv' has no audio stream 2; its audio streams are {', '.join(LABELS)}"
    )


def test_the_first_stream_is_chosen_alone_and_used_without_a_warning(tagged: Path, caplog):
    with caplog.at_level(logging.WARNING, logger="engine.audio.io"):
        recording = load_audio(tagged, RATE, stream=0)
    assert pitch(recording.samples) == pytest.approx(440, abs=5) and caplog.messages == []


def test_without_a_stream_marked_default_the_first_is_used(tmp_path: Path):
    first, second = tone(tmp_path / "a.wav", 440, RATE, 1), tone(tmp_path / "b.wav", 660, RATE, 1)
    path = tmp_path / "plain.mkv"
    ffmpeg("-i", str(first), "-i", str(second), "-map", "0:a", "-map", "1:a", "-c:a", "flac",
           "-disposition:a:0", "0", "-disposition:a:1", "0", str(path))  # fmt: skip
    assert audio_streams(path) == (("#0 (1 ch, 16000 Hz)", "#1 (1 ch, 16000 Hz)"), 0)
    assert pitch(load_audio(path, RATE).samples) == pytest.approx(440, abs=5)


def test_probe_of_a_streamed_mkv_without_a_length_is_zero_yet_it_decodes_whole(tmp_path: Path, caplog):
    source = tone(tmp_path / "a.wav", 440, RATE, 1, seconds=3.0)
    path = tmp_path / "streamed.mkv"
    with path.open("wb") as out:  # written to a pipe: the header never gets the length
        subprocess.run(["ffmpeg", "-loglevel", "error", "-i", str(source), "-c:a", "flac", "-f", "matroska",
                        "pipe:1"], stdout=out, check=True, timeout=60)  # fmt: skip
    assert probe_duration(path) == 0.0  # said unknown, not a guess
    with caplog.at_level(logging.WARNING, logger="engine.audio.io"):
        assert len(load_audio(path, RATE).samples) == 3 * RATE
    assert caplog.messages == []  # one audio stream: nothing to choose, nothing said


def test_the_length_of_a_file_is_its_chosen_streams_not_its_longest(tmp_path: Path):
    short, long = (
        tone(tmp_path / "a.wav", 440, RATE, 1, seconds=1.0),
        tone(tmp_path / "b.wav", 660, RATE, 1, 3.0),
    )
    path = tmp_path / "two.m4a"
    mux_audio([short, long], path, codec="aac")
    assert audio_streams(path)[1] == 0
    assert probe_duration(path) == pytest.approx(1.0, abs=0.05)  # stream #0's, not the file's 3 s
