"""Decoding through libsndfile (soundfile): WAV, FLAC, AIFF and the like, in blocks (see
`engine.audio.blocks`).

Contract:
- `sf_blocks(path, fallback, mix)` yields the file made mono by `mix` (the mean of the channels
  by default; `engine.audio.channels.Mixer`) in blocks of `BLOCK_FRAMES` frames; a file
  libsndfile cannot open (mislabelled, or a codec it lacks) is handed to `fallback` (FFmpeg).
- A WAV whose data ends before the length its header states (a cut-off recording, or a header
  claiming ten times more) is decoded as far as it goes, with a warning "only X of Y".
- A file libsndfile stops reading midway (a FLAC cut off or damaged) is decoded on by `fallback`
  from where it stopped; nothing decodable at all raises `AudioDecodeError` ("is damaged").
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.audio.blocks import Blocks, Header, Mix, clock, damaged, downmix
from engine.errors import AudioDecodeError

log = logging.getLogger("engine.audio.io")

BLOCK_FRAMES = 1 << 16  # source frames decoded per read
_SHORT_S, _SHORT_FRACTION = 1.0, 0.02  # a WAV this much shorter than its header is worth a warning
_UNKNOWN_SIZES = (0, 0xFFFFFFFF, 0x7FFFFFFF)  # what streaming writers put in a size they cannot know


def sf_blocks(path: Path, fallback: Callable[[Path], Blocks], mix: Mix = downmix) -> Blocks:
    try:
        handle = sf.SoundFile(str(path))
    except (sf.SoundFileError, RuntimeError, ValueError):
        yield from fallback(path)  # mislabelled (e.g. an m4a named .wav) or a codec libsndfile lacks
        return
    with handle:
        rate = handle.samplerate
        header = Header(rate, handle.frames / rate, exact=handle.format != "MPEG")  # MP3: estimates
        buf = np.empty((BLOCK_FRAMES, handle.channels), dtype=np.float32)  # (frames, channels)
        done = 0
        while True:
            try:
                block = handle.read(BLOCK_FRAMES, dtype="float32", always_2d=True, out=buf)
            except (sf.SoundFileError, RuntimeError, ValueError) as exc:
                yield from _rest_through(fallback, path, done, damaged(path, done / rate, exc))
                return
            if len(block) == 0:
                break
            done += len(block)
            yield header, mix(block.T)
            if len(block) < BLOCK_FRAMES:
                break
    _warn_if_short(path, done, rate)


def _rest_through(
    fallback: Callable[[Path], Blocks], path: Path, done: int, error: AudioDecodeError
) -> Blocks:
    """What FFmpeg decodes after the first `done` frames, once libsndfile gave up midway (a FLAC
    cut off or damaged: FFmpeg resynchronises and decodes what is there). `error` is raised when
    FFmpeg has nothing either; the caller warns about what is missing."""
    try:
        for header, block in fallback(path):
            skip = min(done, len(block))
            done -= skip
            if skip < len(block):
                yield header, block[skip:]
    except AudioDecodeError:
        raise error from None


def wav_declared_frames(path: Path) -> int | None:
    """The frame count a RIFF/WAVE header states for its data chunk (None: not a WAV, or unknown)."""
    with path.open("rb") as f:
        head = f.read(12)
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return None
        block_align = 0
        while chunk := f.read(8):
            if len(chunk) < 8:
                return None
            kind, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
            if kind == b"data":
                return size // block_align if block_align and size not in _UNKNOWN_SIZES else None
            body = f.read(min(size, 64)) if kind == b"fmt " else b""
            if kind == b"fmt " and len(body) >= 14:
                block_align = struct.unpack("<H", body[12:14])[0]
            f.seek(size + (size & 1) - len(body), 1)  # chunks are padded to an even size
    return None


def _warn_if_short(path: Path, frames: int, rate: int) -> None:
    declared = wav_declared_frames(path) if path.suffix.lower() in (".wav", ".wave") else None
    if declared is None:
        return
    missing = (declared - frames) / rate
    if missing > max(_SHORT_S, _SHORT_FRACTION * declared / rate):
        log.warning(
            "'%s' ends before its header says: only %s of %s could be read (the rest is missing)",
            path.name, clock(frames / rate), clock(declared / rate),
        )  # fmt: skip
