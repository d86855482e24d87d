"""Decoding through FFmpeg (PyAV): every container, one audio stream, in blocks (see `engine.audio.blocks`).

Contract:
- `av_blocks(path, stream)` yields the chosen audio stream downmixed, in blocks of about
  `BLOCK_FRAMES` samples, every block at the *first* frame's rate: a stream whose rate changes
  midway (two MP3s joined byte-wise, 44.1 kHz then 16 kHz) is resampled to it, so nothing after
  the join is lost or played at the wrong speed. Damaged packets are skipped (at most
  `MAX_BAD_PACKETS`), as players do. A file FFmpeg cannot read on past some point (a chained Ogg
  whose next part changes the rate, a cut-off file) is decoded up to it, with a warning.
- Which stream: `stream` (an index among the file's *audio* streams, from 0) when given; else the
  one marked default, else the first. A file with several audio streams gets a warning naming
  them all and the one used (`--audio-stream N` chooses another). A stream index the file lacks
  raises `AudioDecodeError` listing the streams it has.
- `av_duration(path, stream)` is the header's duration of that stream (0.0 when unknown).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import av
import numpy as np

from engine.audio.blocks import (
    Blocks,
    Header,
    Mix,
    clock,
    damaged,
    downmix,
    plausible_seconds,
    reason,
    unreadable,
)
from engine.errors import AudioDecodeError

log = logging.getLogger("engine.audio.io")

BLOCK_FRAMES = 1 << 16  # source frames per block
MAX_BAD_PACKETS = 100  # damaged packets skipped in a compressed stream before giving up
EXACT_LENGTH_CONTAINERS = ("mov", "matroska", "ogg", "wav", "flac", "mp3")  # FFmpeg names; length known


def av_open(path: Path, supported: frozenset[str]) -> av.container.InputContainer:
    try:
        return av.open(str(path), metadata_errors="ignore")  # broken tags must not stop decoding
    except av.FFmpegError as exc:
        raise unreadable(path, exc, supported) from exc


def av_duration(container: av.container.InputContainer, stream: av.AudioStream) -> float:
    if stream.duration is not None and stream.time_base is not None:
        return plausible_seconds(float(stream.duration * stream.time_base))
    if container.duration is not None:
        return plausible_seconds(container.duration / av.time_base)
    return 0.0


def stream_labels(container: av.container.InputContainer) -> list[str]:
    """One label per audio stream, as the user would name it: "#0 (eng, 2 ch, 48000 Hz, default)"."""
    parts = []
    for i, s in enumerate(container.streams.audio):
        facts = [s.metadata.get("language"), s.metadata.get("title"), f"{s.channels} ch", f"{s.rate} Hz"]
        if s.disposition & av.stream.Disposition.default:
            facts.append("default")
        parts.append(f"#{i} ({', '.join(f for f in facts if f)})")
    return parts


def describe_streams(container: av.container.InputContainer) -> str:
    """The audio streams in one line: "#0 (eng, 2 ch, 48000 Hz, default), #1 (…)"."""
    return ", ".join(stream_labels(container))


def audio_stream(container: av.container.InputContainer, path: Path, index: int | None) -> av.AudioStream:
    """The audio stream to decode (see the module contract)."""
    streams = container.streams.audio
    if not streams:
        raise AudioDecodeError(f"'{path.name}' has no audio track")
    if index is not None:
        if not 0 <= index < len(streams):
            have = describe_streams(container)
            raise AudioDecodeError(f"'{path.name}' has no audio stream {index}; its audio streams are {have}")
        return streams[index]
    chosen = default_index(container)
    if len(streams) > 1:
        log.warning(
            "'%s' has %d audio streams: %s; using #%d (choose another with --audio-stream N)",
            path.name, len(streams), describe_streams(container), chosen,
        )  # fmt: skip
    return streams[chosen]


def default_index(container: av.container.InputContainer) -> int:
    """The audio stream marked default, else the first (an index among the audio streams)."""
    flags = [s.disposition & av.stream.Disposition.default for s in container.streams.audio]
    return next((i for i, flag in enumerate(flags) if flag), 0)


def av_blocks(
    path: Path, supported: frozenset[str], stream_index: int | None = None, mix: Mix = downmix
) -> Blocks:
    """The chosen audio stream, downmixed, in blocks of about `BLOCK_FRAMES` samples."""
    with av_open(path, supported) as container:
        stream = audio_stream(container, path, stream_index)
        exact = container.format.name.split(",")[0] in EXACT_LENGTH_CONTAINERS
        header: Header | None = None
        pending: list[np.ndarray] = []
        count = 0
        for frame in decoded_frames(container, stream, path):
            header = header or Header(frame.sample_rate, av_duration(container, stream), exact)
            pending.append(mix(frame.to_ndarray()))
            count += frame.samples
            if count >= BLOCK_FRAMES:
                yield header, np.concatenate(pending)
                pending, count = [], 0
        if header is None:
            raise AudioDecodeError(
                f"'{path.name}' is not an audio file this app can read (no audio could be decoded "
                "from it; it may be damaged)"
            )
        if pending:
            yield header, np.concatenate(pending)


def decoded_frames(
    container: av.container.InputContainer, stream: av.AudioStream, path: Path
) -> Iterator[av.AudioFrame]:
    """Decoded frames as float planar at the first frame's rate and layout; damaged packets skipped."""
    uniform = _Uniform()
    bad = 0
    for packet in _packets(container, stream, path):
        try:
            frames = packet.decode()
        except av.FFmpegError as exc:
            bad += 1
            if bad > MAX_BAD_PACKETS:
                raise damaged(path, _packet_time(packet), exc) from exc
            continue  # one damaged packet: skip it, as players do
        for frame in [*frames, None] if packet.size == 0 else frames:  # None flushes
            yield from uniform.push(frame)


class _Uniform:
    """Frames converted to float planar at the first frame's rate and layout, whatever the later
    frames' (PyAV's resampler passes every frame through unchanged when the first one matched)."""

    def __init__(self) -> None:
        self._target: tuple[int, str] | None = None  # (rate, layout) of the first frame
        self._source: tuple[int, str, str] | None = None  # what the current converter takes
        self._convert: av.AudioResampler | None = None

    def push(self, frame: av.AudioFrame | None) -> list[av.AudioFrame]:
        """The converted frames `frame` completes (None: flush what is buffered)."""
        if frame is None:
            return self._flush()
        source = (frame.sample_rate, frame.layout.name, frame.format.name)
        out: list[av.AudioFrame] = []
        if source != self._source or self._convert is None:
            out = self._flush()
            self._target = self._target or (frame.sample_rate, frame.layout.name)
            rate, layout = self._target
            self._convert, self._source = av.AudioResampler(format="fltp", layout=layout, rate=rate), source
        return out + list(self._convert.resample(frame))

    def _flush(self) -> list[av.AudioFrame]:
        convert, self._convert, self._source = self._convert, None, None
        return [] if convert is None else list(convert.resample(None))


def _packets(
    container: av.container.InputContainer, stream: av.AudioStream, path: Path
) -> Iterator[av.Packet]:
    """The audio stream's packets. A demuxing failure before any packet is a damaged file; after
    some (a cut-off file, a chained Ogg whose next part changes the rate, which FFmpeg cannot
    follow) what came before is kept, with a warning naming where and why it stopped."""
    packets = container.demux(stream)
    at, any_packet = 0.0, False
    while True:
        try:
            packet = next(packets)
        except StopIteration:
            return
        except av.FFmpegError as exc:
            if not any_packet:
                raise damaged(path, at, exc) from exc
            log.warning(
                "'%s' cannot be read past %s (%s); what comes before was decoded",
                path.name, clock(at), reason(exc),
            )  # fmt: skip
            return
        at, any_packet = _packet_time(packet) or at, True
        yield packet


def _packet_time(packet: av.Packet) -> float:
    if packet.pts is None or packet.time_base is None:
        return 0.0
    return float(packet.pts * packet.time_base)
