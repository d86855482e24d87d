"""One time range of a file, decoded alone (`engine.audio.clip`): the same samples the whole file's
decode has there, from a seekable FLAC and from an AAC file alike, stereo mixed to mono, a range
past the end cut short, and bad ranges and missing files refused with a sentence."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import av
import numpy as np
import pytest
import soundfile as sf

from engine.audio.clip import MAX_CLIP_S, load_clip
from engine.errors import AudioDecodeError
from engine.testing.streams import mux_audio

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "meeting.flac"


def demo() -> tuple[np.ndarray, int]:
    samples, rate = sf.read(DEMO, dtype="float32")
    return samples, rate


def test_a_range_of_a_flac_is_exactly_those_samples_of_the_whole_file():
    # catches: a sample too many or too few at either end of the range (a rounding slip after the seek)
    full, rate = demo()
    clip = load_clip(DEMO, 30.8, 39.9)
    assert clip.sample_rate == rate and clip.source == DEMO and clip.samples.dtype == np.float32
    np.testing.assert_array_equal(clip.samples, full[round(30.8 * rate) : round(39.9 * rate)])


def test_a_range_of_an_aac_file_lines_up_with_the_audio_it_was_encoded_from(tmp_path):
    # catches: the clip cut by packet times before the seek point rather than by decoded frame times
    full, rate = demo()
    path = tmp_path / "meeting.m4a"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("aac", rate=rate, layout="mono")
        for i in range(0, rate * 60, 1024):
            frame = av.AudioFrame.from_ndarray(full[None, i : i + 1024].copy(), format="flt", layout="mono")
            frame.sample_rate, frame.pts = rate, i
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    clip = load_clip(path, 30.8, 39.9)
    reference = full[round(30.8 * rate) : round(39.9 * rate)]
    assert len(clip.samples) == len(reference)
    assert np.corrcoef(clip.samples, reference)[0, 1] > 0.99


def test_stereo_is_mixed_to_mono_and_a_range_past_the_end_gives_what_there_is(tmp_path):
    # catches: one channel taken for the mix, or samples invented past the end of the file
    rate = 8000
    left = np.linspace(-0.5, 0.5, rate * 3, dtype=np.float32)
    path = tmp_path / "two.wav"
    sf.write(path, np.stack([left, -left / 2], axis=1), rate, subtype="FLOAT")
    clip = load_clip(path, 2.5, 9.0)
    np.testing.assert_allclose(clip.samples, (left / 4)[round(2.5 * rate) :], atol=1e-6)
    assert len(load_clip(path, 4.0, 5.0).samples) == 0
    assert len(load_clip(path, 3.0, 4.0).samples) == 0  # from exactly the end: nothing, not "damaged"


@pytest.mark.parametrize(("start", "end"), [(-1.0, 2.0), (5.0, 4.0), (0.0, MAX_CLIP_S + 1)])
def test_a_range_that_is_not_a_clip_is_refused(start, end):
    with pytest.raises(ValueError, match="clip"):
        load_clip(DEMO, start, end)


def test_the_length_limit_is_the_clips_own_length_wherever_it_starts():
    # catches: the limit measured from the file's start (a clip late in a long file refused), or an
    # empty range refused; the refusal names the length asked for
    assert len(load_clip(DEMO, 5.0, 5.0).samples) == 0
    assert len(load_clip(DEMO, 0.0, MAX_CLIP_S).samples) == len(demo()[0])  # the limit itself is a clip
    assert len(load_clip(DEMO, MAX_CLIP_S - 10, MAX_CLIP_S + 10).samples) == 0  # past the demo's end
    with pytest.raises(ValueError, match=r"at most 600 s long, got 601 s"):
        load_clip(DEMO, 10.0, 611.0)


def test_a_missing_file_or_one_that_is_not_audio_is_a_sentence_naming_it(tmp_path):
    with pytest.raises(AudioDecodeError, match=r"'gone\.flac' is not there any more"):
        load_clip(tmp_path / "gone.flac", 0.0, 1.0)
    (tmp_path / "notes.flac").write_text("not audio")
    with pytest.raises(AudioDecodeError, match=r"'notes\.flac'"):
        load_clip(tmp_path / "notes.flac", 0.0, 1.0)
    (tmp_path / "notes.txt").write_bytes(bytes(range(256)) * 8)
    unsupported = r"'notes\.txt' is not an audio file .*'\.txt' is not a supported format"
    with pytest.raises(AudioDecodeError, match=unsupported):
        load_clip(tmp_path / "notes.txt", 0.0, 1.0)
    (tmp_path / "captions.srt").write_text("1\n00:00:00,000 --> 00:00:01,000\nHello.\n")
    with pytest.raises(AudioDecodeError, match=r"'captions\.srt' has no audio track"):
        load_clip(tmp_path / "captions.srt", 0.0, 1.0)


def test_a_clip_late_in_a_file_decodes_only_the_frames_around_it(monkeypatch):
    # catches: the seek dropped or aimed at the file's start (the whole file before the clip decoded:
    # an hour-long recording's last minute would take the hour to reach)
    import engine.audio.clip as clip

    frames, decode = [], clip._mono_frames

    def counted(*args):
        for frame in decode(*args):
            frames.append(frame[0])
            yield frame

    monkeypatch.setattr(clip, "_mono_frames", counted)
    load_clip(DEMO, 90.0, 92.0)
    assert frames and 89.0 < min(frames) <= 90.0  # FLAC frames of 0.256 s: one frame before the start
    assert len(frames) <= 10


def test_the_default_stream_of_a_file_with_two_is_the_one_clipped(tmp_path, caplog):
    # catches: every stream decoded into one clip, or the first stream taken when another is marked default
    rate = 8000
    tone = (0.5 * np.sin(2 * np.pi * 440 * np.arange(4 * rate) / rate)).astype(np.float32)
    sf.write(tmp_path / "silent.wav", np.zeros(4 * rate, np.float32), rate)
    sf.write(tmp_path / "tone.wav", tone, rate, subtype="FLOAT")
    path = tmp_path / "two.mkv"
    inputs = ["-i", str(tmp_path / "silent.wav"), "-i", str(tmp_path / "tone.wav")]
    streams = ["-map", "0:a", "-map", "1:a", "-c:a", "flac", "-disposition:a:0", "0"]
    default = ["-disposition:a:1", "default"]
    command = ["ffmpeg", "-y", "-v", "error", *inputs, *streams, *default, str(path)]
    subprocess.run(command, check=True, timeout=60)
    with caplog.at_level(logging.WARNING):
        clip = load_clip(path, 1.0, 2.0)
    assert len(clip.samples) == rate
    np.testing.assert_allclose(clip.samples, tone[rate : 2 * rate], atol=1e-4)
    assert caplog.records == []  # a sample plays without "has 2 audio streams" in the log


def two_streams_of_stereo(folder: Path, rate: int) -> tuple[Path, list[np.ndarray]]:
    """An MKV with two stereo streams of four tones: (path, [s0 left, s0 right, s1 left, s1 right])."""
    t = np.arange(3 * rate) / rate
    tones = [(0.4 * np.sin(2 * np.pi * hz * t)).astype(np.float32) for hz in (300, 500, 700, 900)]
    for i in (0, 1):
        sf.write(folder / f"s{i}.wav", np.stack(tones[2 * i : 2 * i + 2], axis=1), rate, subtype="FLOAT")
    path = mux_audio([folder / "s0.wav", folder / "s1.wav"], folder / "two.mkv")
    return path, tones


@pytest.mark.parametrize(("stream", "channel", "which"), [(1, 1, 3), (1, 0, 2), (0, 1, 1), (None, 1, 1)])
def test_a_chosen_stream_and_channel_are_the_ones_clipped(tmp_path, stream, channel, which):
    # catches: the default stream or the mix played for a voice sample taken from another stream or channel
    rate = 8000
    path, tones = two_streams_of_stereo(tmp_path, rate)
    clip = load_clip(path, 1.0, 2.0, stream=stream, channel=channel)
    np.testing.assert_allclose(clip.samples, tones[which][rate : 2 * rate], atol=1e-4)
    assert (clip.stream, clip.channel) == (stream, channel)
    mixed = load_clip(path, 1.0, 2.0, stream=1)
    np.testing.assert_allclose(mixed.samples, ((tones[2] + tones[3]) / 2)[rate : 2 * rate], atol=1e-4)


def test_a_stream_or_channel_the_file_lacks_is_a_sentence_naming_what_it_has(tmp_path):
    path, _ = two_streams_of_stereo(tmp_path, 8000)
    with pytest.raises(AudioDecodeError, match=r"'two.mkv' has no audio stream 2; its audio streams are"):
        load_clip(path, 1.0, 2.0, stream=2)
    with pytest.raises(AudioDecodeError, match=r"'two.mkv' has 2 channels \(0–1\); it has no channel 2"):
        load_clip(path, 1.0, 2.0, stream=1, channel=2)


def test_a_file_damaged_from_some_point_on_is_refused_there_and_clipped_before_it(tmp_path):
    # catches: a damaged stretch returned as an empty clip (Play Sample plays silence without a word)
    rate = 44_100
    whole = tmp_path / "whole.flac"
    sf.write(whole, (0.3 * np.sin(np.arange(5 * rate) / 20)).astype(np.float32), rate)
    data = whole.read_bytes()
    noise = np.random.default_rng(1).integers(0, 256, 40_000, dtype=np.uint8).tobytes()
    damaged = tmp_path / "damaged.flac"
    damaged.write_bytes(data[: len(data) // 2] + noise)  # the header still says 5 s
    assert len(load_clip(damaged, 0.5, 1.5).samples) == rate
    with pytest.raises(AudioDecodeError, match=r"'damaged\.flac' is damaged: nothing decodes from 0:00:04"):
        load_clip(damaged, 4.0, 4.5)
    garbage = tmp_path / "garbage.flac"
    garbage.write_bytes(data[: data.index(b"\xff\xf8")] + noise)  # the stream info, then no audio frame
    with pytest.raises(AudioDecodeError, match=r"'garbage\.flac' is damaged: nothing decodes from 0:00:00"):
        load_clip(garbage, 0.0, 1.0)


def test_a_damaged_packet_inside_the_range_is_skipped_as_the_whole_files_decode_skips_it(tmp_path):
    # catches: one bad packet in an AAC file ending the clip as "not an audio file this app can read"
    whole = tmp_path / "whole.m4a"
    sine = "sine=frequency=440:duration=6:sample_rate=44100"
    subprocess.run(["ffmpeg", "-y", "-v", "error", "-f", "lavfi", "-i", sine, str(whole)], check=True)
    data = bytearray(whole.read_bytes())
    third = len(data) // 3
    data[third : 2 * third] = np.random.default_rng(3).integers(0, 256, third, dtype=np.uint8).tobytes()
    damaged = tmp_path / "damaged.m4a"
    damaged.write_bytes(bytes(data))
    clip = load_clip(damaged, 0.0, 6.0)
    assert 2.0 < len(clip.samples) / clip.sample_rate < 6.0  # what decodes, up to the damage and after it


def test_a_stretch_of_damaged_packets_too_long_to_skip_is_named_with_its_time(tmp_path):
    # catches: the file's name lost on the way to the packet decoder (a traceback instead of a sentence)
    whole = tmp_path / "whole.aac"  # ADTS: no index, so the damage is met packet by packet
    sine = "sine=frequency=440:duration=120:sample_rate=44100"
    subprocess.run(["ffmpeg", "-y", "-v", "error", "-f", "lavfi", "-i", sine, str(whole)], check=True)
    data = bytearray(whole.read_bytes())
    start = len(data) // 20
    data[start:] = np.random.default_rng(3).integers(0, 256, len(data) - start, dtype=np.uint8).tobytes()
    damaged = tmp_path / "damaged.aac"
    damaged.write_bytes(bytes(data))
    with pytest.raises(AudioDecodeError, match=r"'damaged\.aac' is damaged: decoding failed at 0:00:0\d"):
        load_clip(damaged, 0.0, 120.0)
