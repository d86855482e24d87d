"""Damaged packets in a compressed stream (`engine.audio.av_source`): up to `MAX_BAD_PACKETS` are
skipped as players do, one more makes the file damaged, named with the time it broke at; a stream
FFmpeg cannot read on past some point is kept up to it, with a warning saying where and why."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import av
import numpy as np
import pytest

from engine.audio.av_source import BLOCK_FRAMES, MAX_BAD_PACKETS, av_blocks
from engine.audio.io import SUPPORTED_EXTENSIONS, load_audio
from engine.errors import AudioDecodeError

RATE = 16_000


def with_damage(path: Path, seconds: float, damaged: range) -> tuple[int, list[float]]:
    """A FLAC-in-Matroska tone of `seconds`, the packets numbered in `damaged` made garbage: the
    samples in the packets left whole, and the start time of each damaged packet."""
    t = np.arange(int(seconds * RATE)) / RATE
    tone = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    whole, broken = 0, []
    with av.open(str(path), "w", format="matroska") as out:
        stream = out.add_stream("flac", rate=RATE, layout="mono")
        frame = av.AudioFrame.from_ndarray(tone[None, :], "flt", "mono")
        frame.sample_rate, frame.pts = RATE, 0
        for number, packet in enumerate([*stream.encode(frame), *stream.encode(None)]):
            if number in damaged:
                broken.append(float(packet.pts * packet.time_base))
                garbage = av.Packet(b"\x00" * 64)
                garbage.pts, garbage.dts, garbage.time_base = packet.pts, packet.dts, packet.time_base
                garbage.stream = stream
                packet = garbage
            else:
                whole += int(packet.duration * packet.time_base * RATE)
            out.mux(packet)
    return whole, broken


def test_as_many_damaged_packets_as_allowed_are_skipped_and_the_rest_decoded(tmp_path: Path):
    path = tmp_path / "scratched.mkv"
    whole, broken = with_damage(path, 60.0, range(20, 20 + MAX_BAD_PACKETS))
    assert len(broken) == MAX_BAD_PACKETS
    assert len(load_audio(path, RATE).samples) == whole


def test_one_damaged_packet_more_makes_the_file_damaged_at_the_time_of_that_packet(tmp_path: Path):
    path = tmp_path / "scratched.mkv"
    _, broken = with_damage(path, 60.0, range(20, 21 + MAX_BAD_PACKETS))
    minutes, seconds = divmod(int(broken[-1]), 60)
    with pytest.raises(AudioDecodeError) as caught:
        load_audio(path, RATE)
    assert str(caught.value).startswith(
        f"'scratched.mkv' is damaged: decoding failed at 0:{minutes:02d}:{seconds:02d} ("
    ), str(caught.value)


def test_a_chained_ogg_whose_second_part_changes_the_rate_keeps_the_first_and_says_where_it_stopped(
    tmp_path: Path, caplog
):
    parts = []
    for name, rate in (("a.ogg", 44_100), ("b.ogg", 16_000)):
        parts.append(tmp_path / name)
        subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i",
                        f"sine=frequency=440:duration=5:sample_rate={rate}", "-c:a", "libvorbis",
                        str(parts[-1])],
                       check=True, timeout=60)  # fmt: skip
    chained = tmp_path / "chained.ogg"
    chained.write_bytes(b"".join(p.read_bytes() for p in parts))
    with caplog.at_level(logging.WARNING, logger="engine.audio.io"):
        decoded = load_audio(chained, RATE).samples
    assert len(decoded) == pytest.approx(5 * RATE, abs=RATE // 100)  # the first part whole
    (said,) = caplog.messages  # FFmpeg cannot follow the rate change: where and why it stopped
    assert said.startswith("'chained.ogg' cannot be read past 0:00:04 (")
    assert said.endswith("); what comes before was decoded")


def test_a_file_whose_every_packet_is_damaged_says_no_audio_could_be_decoded(tmp_path: Path):
    path = tmp_path / "scratched.mkv"
    with_damage(path, 5.0, range(MAX_BAD_PACKETS))  # fewer packets than may be skipped: all of them
    with pytest.raises(AudioDecodeError) as caught:
        load_audio(path, RATE)
    assert str(caught.value) == (
        "'scratched.mkv' is not an audio file this app can read"
        " (no audio could be decoded from it; it may be damaged)"
    )


def test_a_file_that_is_not_media_at_all_says_its_data_is_unrecognised(tmp_path: Path):
    path = tmp_path / "notes.mkv"
    path.write_text("Meeting notes\n- budget\n" * 50)
    with pytest.raises(AudioDecodeError) as caught:
        load_audio(path, RATE)
    assert (
        str(caught.value)
        == "'notes.mkv' is not an audio file this app can read (unrecognised or damaged data)"
    )


def test_a_title_tag_that_is_not_utf8_does_not_stop_decoding(tmp_path: Path):
    source = tmp_path / "talk.mkv"
    with_damage(source, 2.0, range(0))
    tagged = tmp_path / "tagged.mkv"
    subprocess.run([b"ffmpeg", b"-y", b"-loglevel", b"error", b"-i", bytes(source), b"-c", b"copy",
                    b"-metadata", b"title=Caf\xe9 \xff", bytes(tagged)], check=True, timeout=60)  # fmt: skip
    assert len(load_audio(tagged, RATE).samples) == 2 * RATE


def test_a_long_compressed_file_comes_in_blocks_of_the_stated_size(tmp_path: Path):
    path = tmp_path / "long.mkv"
    frame = 4_096  # BLOCK_FRAMES is 16 of these
    with av.open(str(path), "w", format="matroska") as out:
        stream = out.add_stream("pcm_s16le", rate=RATE, layout="mono")
        for k in range(50):
            audio = av.AudioFrame.from_ndarray(np.full((1, frame), 1000 + k, np.int16), "s16", "mono")
            audio.sample_rate, audio.pts = RATE, k * frame
            for packet in stream.encode(audio):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    sizes = [len(block) for _, block in av_blocks(path, SUPPORTED_EXTENSIONS)]
    assert sizes == [BLOCK_FRAMES] * 3 + [50 * frame - 3 * BLOCK_FRAMES]
