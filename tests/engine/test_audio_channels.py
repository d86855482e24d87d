"""Stereo a user records carelessly, and audio out of scale or cut short, is transcribed: channels
that cancel out when mixed (one side wired inverted) are noticed and the loudest one used, any
channel can be chosen (`--channel`), peaks above full scale follow one rule, and a chained Ogg
whose second part changes the rate gives its first part with a warning."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.audio.channels import parse_channel
from engine.audio.io import load_audio
from engine.audio.sf_source import BLOCK_FRAMES
from engine.errors import AudioDecodeError, Cancelled
from engine.pipeline import PipelineConfig
from engine.testing.streams import mux_audio

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "resources" / "demo" / "meeting.flac"
RATE = 16_000


def sine(hz: float, seconds: float = 3.0, level: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (level * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def pitch(samples: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    return float(np.argmax(spectrum) * RATE / len(samples))


def rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))


def stereo(path: Path, left: np.ndarray, right: np.ndarray, subtype: str = "PCM_16") -> Path:
    sf.write(path, np.stack([left, right], axis=1), RATE, subtype=subtype)
    return path


# ------------------------------------------------------------------ channels that cancel out


@pytest.mark.parametrize("ext", ["wav", "flac"])
def test_opposite_phase_stereo_is_noticed_and_one_channel_is_transcribed(tmp_path: Path, caplog, ext: str):
    voice = sine(440)
    path = stereo(tmp_path / f"inverted.{ext}", voice, -voice)
    with caplog.at_level(logging.WARNING):
        recording = load_audio(path, RATE)
    assert rms(recording.samples) == pytest.approx(rms(voice), rel=0.02), "the mix of the two is silence"
    assert "cancel out when mixed" in caplog.text and "--channel" in caplog.text


def test_a_speaker_on_each_side_is_mixed_without_a_warning(tmp_path: Path, caplog):
    path = stereo(tmp_path / "two.wav", sine(440), sine(660, level=0.05))  # one near, one far
    with caplog.at_level(logging.WARNING):
        recording = load_audio(path, RATE)
    assert caplog.text == ""
    assert rms(recording.samples) == pytest.approx(rms((sine(440) + sine(660, level=0.05)) / 2), rel=0.02)


@pytest.mark.parametrize("level", [0.0, 1e-4])
def test_silent_stereo_is_not_called_cancelling(tmp_path: Path, caplog, level: float):
    hiss = sine(440, level=level)  # digital silence, or an inverted hiss far below speech
    with caplog.at_level(logging.WARNING):
        load_audio(stereo(tmp_path / "silent.wav", hiss, -hiss, subtype="FLOAT"), RATE)
    assert "cancel" not in caplog.text


@pytest.mark.parametrize(
    ("channel", "hz", "number"), [("left", 440, 0), ("right", 660, 1), (1, 660, 1), ("0", 440, 0)]
)
def test_a_channel_can_be_chosen_and_the_recording_says_which(tmp_path: Path, channel, hz: int, number: int):
    path = stereo(tmp_path / "two.wav", sine(440), sine(660))
    recording = load_audio(path, RATE, channel=channel)
    assert pitch(recording.samples) == pytest.approx(hz, abs=2)
    assert (recording.stream, recording.channel) == (None, number)  # a voice sample from it plays this side


def test_a_mix_says_it_is_one_and_a_chosen_stream_is_kept(tmp_path: Path):
    # catches: a mixed recording said to be one channel, or the stream asked for dropped on the way
    path = stereo(tmp_path / "two.wav", sine(440), sine(660))
    assert (load_audio(path, RATE).channel, load_audio(path, RATE, channel="mix").channel) == (None, None)
    assert load_audio(path, RATE, stream=0).stream == 0


def test_a_channel_the_file_lacks_is_refused_with_what_it_has(tmp_path: Path):
    path = stereo(tmp_path / "two.wav", sine(440), sine(660))
    with pytest.raises(AudioDecodeError, match=r"has 2 channels \(0–1\); it has no channel 2"):
        load_audio(path, RATE, channel=2)


@pytest.mark.parametrize("bad", ["middle", "-1", -1, 1.5, True, ""])
def test_a_channel_that_is_no_channel_is_refused(bad):
    with pytest.raises(ValueError, match="mix, left, right or a number from 0"):
        parse_channel(bad)
    with pytest.raises(ValueError, match="mix, left, right or a number from 0"):
        PipelineConfig(channel=bad)


def test_the_cli_transcribes_opposite_phase_stereo_and_says_why(tmp_path: Path):
    voice, _ = sf.read(DEMO, dtype="float32", frames=12 * RATE)
    path = stereo(tmp_path / "inverted.wav", voice, -voice)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    cmd = [
        sys.executable,
        "-m",
        "engine",
        "transcribe",
        str(path),
        "--out",
        str(tmp_path),
        "--format",
        "json",
    ]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "cancel out when mixed" in done.stderr
    words = " ".join(u["text"] for u in json.loads((tmp_path / "inverted.json").read_text())["utterances"])
    assert len(words.split()) >= 5, "the transcript is empty"
    bad = subprocess.run([*cmd, "--channel", "middle"], env=env, capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "--channel" in bad.stderr and "mix, left, right" in bad.stderr


def test_a_mono_file_asked_for_its_right_channel_says_it_has_one(tmp_path: Path):
    path = tmp_path / "mono.wav"
    sf.write(path, sine(440), RATE)
    with pytest.raises(AudioDecodeError) as refused:
        load_audio(path, RATE, channel="right")
    assert str(refused.value).endswith("'mono.wav' has 1 channel (0–0); it has no channel 1")


def test_the_cancelling_warning_names_the_file_and_the_channel_in_full(tmp_path: Path, caplog):
    # catches: the warning's file name dropped or its words changed (users search the log for them)
    voice = sine(440)
    with caplog.at_level(logging.WARNING):
        load_audio(stereo(tmp_path / "inverted.wav", voice, -0.9 * voice, "FLOAT"), RATE)
    assert [r.getMessage() for r in caplog.records] == [
        "'inverted.wav': its channels cancel out when mixed (opposite phase: one side wired inverted?), "
        "which leaves silence; transcribing channel 0 alone instead (choose with --channel left|right|N)"
    ]


def test_the_side_kept_from_cancelling_stereo_comes_from_the_chosen_stream(tmp_path: Path):
    # catches: the second decode of a cancelling file taking the default stream instead of the chosen one
    voice, other = sine(440), sine(660, level=0.2)
    stereo(tmp_path / "first.wav", other, other)
    stereo(tmp_path / "second.wav", voice, -voice, "FLOAT")
    path = mux_audio([tmp_path / "first.wav", tmp_path / "second.wav"], tmp_path / "two.mkv")
    recording = load_audio(path, RATE, stream=1)
    assert pitch(recording.samples) == pytest.approx(440, abs=2)
    assert (recording.stream, recording.channel) == (1, 0)


def test_a_cancel_after_the_mix_is_judged_stops_the_decode_of_the_side_kept(tmp_path: Path):
    # catches: the second decode of a cancelling file given no cancel or no progress: it ran to its end
    cancel, reports = threading.Event(), []

    def progress(done: float, total: float) -> None:
        if reports and reports[-1] >= total:  # the first pass, over the mix, is done: the user cancels now
            cancel.set()
        reports.append(done)

    voice = sine(440, seconds=8 * BLOCK_S)  # several blocks in each pass
    with pytest.raises(Cancelled):
        load_audio(
            stereo(tmp_path / "inverted.wav", voice, -voice, "FLOAT"), RATE, progress=progress, cancel=cancel
        )
    assert cancel.is_set() and reports


def test_when_the_sides_cancel_the_louder_right_one_is_transcribed(tmp_path: Path, caplog):
    voice = sine(440)
    with caplog.at_level(logging.WARNING):
        recording = load_audio(stereo(tmp_path / "inverted.wav", -0.9 * voice, voice, "FLOAT"), RATE)
    assert "cancel out when mixed" in caplog.text
    assert rms(recording.samples) == pytest.approx(rms(voice), rel=0.02), "the right side, not the left's 0.9"
    assert recording.channel == 1  # the side transcribed, not "the mix": a sample of it plays that side


@pytest.mark.parametrize(("db", "cancels"), [(19.5, False), (20.5, True)])
def test_a_mix_counts_as_cancelling_from_20_db_below_the_louder_side(tmp_path: Path, caplog, db, cancels):
    voice = sine(440)
    inverted = -(1 - 2 * 10 ** (-db / 20)) * voice  # the mean of the sides is `db` below the left
    with caplog.at_level(logging.WARNING):
        recording = load_audio(stereo(tmp_path / "near.wav", voice, inverted, "FLOAT"), RATE)
    assert ("cancel out when mixed" in caplog.text) is cancels
    heard = rms(voice) if cancels else rms(voice) * 10 ** (-db / 20)
    assert rms(recording.samples) == pytest.approx(heard, rel=0.02)


def test_a_short_quiet_clip_whose_sides_cancel_is_noticed(tmp_path: Path, caplog):
    voice = sine(440, seconds=0.5, level=0.05)  # a voice note: little energy in all
    with caplog.at_level(logging.WARNING):
        recording = load_audio(stereo(tmp_path / "note.wav", voice, -voice, "FLOAT"), RATE)
    assert "cancel out when mixed" in caplog.text
    assert rms(recording.samples) == pytest.approx(rms(voice), rel=0.02)


# ------------------------------------------------------------------ cancelling is judged on the whole file

BLOCK_S = BLOCK_FRAMES / RATE  # one block of the decoder


def test_a_file_that_cancels_only_at_its_end_is_mixed(tmp_path: Path, caplog):
    left = np.concatenate([sine(440, BLOCK_S), sine(550, 2 * BLOCK_S)])
    right = np.concatenate([sine(660, BLOCK_S), -sine(550, 2 * BLOCK_S)])  # a side flips after a block
    with caplog.at_level(logging.WARNING):
        recording = load_audio(stereo(tmp_path / "flips.wav", left, right, "FLOAT"), RATE)
    assert caplog.text == ""
    assert rms(recording.samples) == pytest.approx(rms((left + right) / 2), rel=0.02)


def test_the_side_louder_over_the_whole_file_is_transcribed_not_the_louder_at_the_end(tmp_path: Path, caplog):
    voice = sine(440, 3 * BLOCK_S)
    first, rest = slice(0, BLOCK_FRAMES), slice(BLOCK_FRAMES, None)
    left, right = voice.copy(), -voice.copy()
    left[first] *= 0.5
    right[first] *= 0.48  # left louder in the first block
    left[rest] *= 0.3
    right[rest] *= 0.35  # right louder in the other two, and over the whole file
    with caplog.at_level(logging.WARNING):
        recording = load_audio(stereo(tmp_path / "drift.wav", left, right, "FLOAT"), RATE)
    assert "cancel out when mixed" in caplog.text
    assert rms(recording.samples) == pytest.approx(rms(right), rel=0.02)


def test_a_long_inverted_hiss_below_speech_is_not_called_cancelling(tmp_path: Path, caplog):
    hiss = sine(440, 5 * BLOCK_S, level=0.9e-3)  # RMS 0.64e-3 in every block: below AUDIBLE throughout
    with caplog.at_level(logging.WARNING):
        load_audio(stereo(tmp_path / "hiss.wav", hiss, -hiss, "FLOAT"), RATE)
    assert "cancel" not in caplog.text


# ------------------------------------------------------------------ above full scale: one rule


@pytest.mark.parametrize("peak", [1.5, 3.9, 4.1, 1e6])
def test_peaks_above_full_scale_are_scaled_down_with_a_warning_whatever_their_height(
    tmp_path: Path, caplog, peak: float
):
    wave = sine(440, level=0.5)
    wave[RATE] = peak  # one spike above full scale in a float file
    path = tmp_path / "over.wav"
    sf.write(path, wave, RATE, subtype="FLOAT")
    with caplog.at_level(logging.WARNING):
        recording = load_audio(path, RATE)
    assert "beyond the ±1" in caplog.text
    assert np.abs(recording.samples).max() == pytest.approx(1.0, abs=1e-6)
    assert rms(recording.samples) == pytest.approx(rms(wave) / peak, rel=0.01)  # scaled, not clipped


def test_a_full_scale_file_is_neither_scaled_nor_warned_about(tmp_path: Path, caplog):
    path = tmp_path / "full.wav"
    sf.write(path, sine(440, level=1.0), RATE, subtype="FLOAT")
    with caplog.at_level(logging.WARNING):
        recording = load_audio(path, RATE)
    assert caplog.text == ""
    assert np.abs(recording.samples).max() == pytest.approx(1.0, abs=1e-3)


# ------------------------------------------------------------------ a chained Ogg that changes rate


def test_a_chained_ogg_whose_second_part_changes_rate_gives_its_first_part_with_a_warning(
    tmp_path: Path, caplog
):
    def ogg(path: Path, hz: int, rate: int) -> bytes:
        subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i",
                        f"sine=frequency={hz}:duration=5:sample_rate={rate}", "-c:a", "libvorbis", str(path)],
                       check=True, timeout=60)  # fmt: skip
        return path.read_bytes()

    chained = tmp_path / "chained.ogg"
    chained.write_bytes(ogg(tmp_path / "a.ogg", 440, 44_100) + ogg(tmp_path / "b.ogg", 660, 16_000))
    with caplog.at_level(logging.WARNING):
        recording = load_audio(chained, RATE)
    assert recording.duration == pytest.approx(5.0, abs=0.2)
    assert pitch(recording.slice(1.0, 4.0)) == pytest.approx(440, abs=5)
    assert "'chained.ogg' cannot be read past 0:00:0" in caplog.text
