"""Decode one time range of a file, and only that range: a few seconds to listen to.

Contract:
- `load_clip(path, start, end, stream, channel)` returns the samples of audio stream `stream`
  (None: the default one) from `start` to `end` seconds as float32 mono at the file's own rate:
  channel `channel`, or the mean of the channels when None (the `Recording` says which: `source`
  is `path`). A stream or channel the file lacks is an `AudioDecodeError` that names those it has.
  The decoder seeks to the key frame before `start` and stops at the first frame past `end`, so a
  clip of an hour-long file costs what the clip costs: memory holds the clip alone.
- A range past the file's end gives what there is (possibly nothing). `end - start` above
  `MAX_CLIP_S`, a negative start or an end before the start is a `ValueError`; a file that cannot
  be decoded is an `AudioDecodeError` naming it (as `engine.audio.io.load_audio` says), and so is
  one of which nothing in the range decodes although its header says it goes on past `start`
  (damaged there: a clip of silence would not say why). A damaged packet inside the range is
  skipped, as the whole file's decode skips it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import av
import numpy as np

from engine.audio.av_source import audio_stream, av_duration, av_open, decoded_frames, default_index
from engine.audio.blocks import clock, unreadable
from engine.audio.channels import Mixer
from engine.audio.io import SUPPORTED_EXTENSIONS
from engine.errors import AudioDecodeError
from engine.types import Recording

MAX_CLIP_S = 600.0


def load_clip(
    path: str | Path, start: float, end: float, stream: int | None = None, channel: int | None = None
) -> Recording:
    """Samples of `path` between `start` and `end` seconds (see the module contract)."""
    if start < 0 or end < start:
        raise ValueError(f"a clip runs from a start ≥ 0 to a later end, got {start:g} … {end:g} s")
    if end - start > MAX_CLIP_S:
        raise ValueError(f"a clip is at most {MAX_CLIP_S:g} s long, got {end - start:g} s")
    path = Path(path)
    if not path.is_file():
        raise AudioDecodeError(f"'{path.name}' is not there any more ({path.parent})")
    with av_open(path, SUPPORTED_EXTENSIONS) as container:
        index = default_index(container) if stream is None else stream
        chosen = audio_stream(container, path, index)
        try:
            pieces, rate = _decode_range(container, chosen, Mixer(path, channel), start, end)
        except av.FFmpegError as exc:
            raise unreadable(path, exc, SUPPORTED_EXTENSIONS) from exc
        if not pieces and start < min(end, av_duration(container, chosen)):
            raise AudioDecodeError(f"'{path.name}' is damaged: nothing decodes from {clock(start)} on")
    if not rate:
        raise AudioDecodeError(f"'{path.name}' is not an audio file this app can read (no audio in it)")
    samples = np.concatenate(pieces) if pieces else np.zeros(0, np.float32)
    return Recording(
        samples.astype(np.float32, copy=False), rate, source=path, stream=stream, channel=channel
    )


def _decode_range(
    container: av.container.InputContainer, stream: av.AudioStream, mix: Mixer, start: float, end: float
) -> tuple[list[np.ndarray], int]:
    """The mono pieces inside [start, end) and their rate."""
    rate = stream.rate or stream.codec_context.sample_rate
    if stream.time_base is not None and start > 0:
        container.seek(int(start / stream.time_base), stream=stream, backward=True)
    pieces: list[np.ndarray] = []
    for t0, mono, rate in _mono_frames(container, stream, mix):
        first = max(round((start - t0) * rate), 0)
        last = min(round((end - t0) * rate), len(mono))
        if first < last:
            pieces.append(mono[first:last])
        if t0 + len(mono) / rate >= end:
            break
    return pieces, rate


def _mono_frames(
    container: av.container.InputContainer, stream: av.AudioStream, mix: Mixer
) -> Iterator[tuple[float, np.ndarray, int]]:
    """(start time, float32 mono samples, rate) of each decoded frame from where the file stands;
    a damaged packet is skipped as the whole file's decode skips it (`decoded_frames`)."""
    for frame in decoded_frames(container, stream, mix.path):
        if frame.time is None:
            continue
        yield float(frame.time), mix(frame.to_ndarray()), frame.sample_rate
