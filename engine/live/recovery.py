"""Recordings a crash, a kill or a power cut left behind, and how to make them whole again.

Contract:
- `find_partial(folder)` lists the recordings in `folder` whose marker (`FlacWriter`'s
  `<name>.recording.json`) is still there: they were cut short. Newest first.
- `recover(partial)` decodes the FLAC as far as it goes (a cut-short file has no length in its
  header and may end inside a frame; PyAV reads it to the last whole frame), rewrites it as a clean
  FLAC in place (through a temporary file, so a second crash loses nothing) and removes the marker;
  it returns the seconds kept. A file with no decodable audio raises `RecordingError` and is left
  as it was. `discard(partial)` removes the marker only (the file stays).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np

from engine.errors import RecordingError
from engine.live.flac_writer import MARKER_SUFFIX, FlacWriter, marker_path


@dataclass(frozen=True, slots=True)
class PartialRecording:
    audio: Path
    marker: Path
    started: str = ""
    size: int = 0  # bytes of audio on disk


def find_partial(folder: Path) -> list[PartialRecording]:
    """Recordings in `folder` cut short before they were closed (newest first)."""
    if not folder.is_dir():
        return []
    found = []
    for marker in folder.glob(f"*{MARKER_SUFFIX}"):
        audio = marker.with_name(marker.name[: -len(MARKER_SUFFIX)])
        if not audio.is_file():
            continue
        try:
            started = str(json.loads(marker.read_text()).get("started", ""))
        except (OSError, ValueError, AttributeError):
            started = ""
        found.append(PartialRecording(audio, marker, started, audio.stat().st_size))
    return sorted(found, key=lambda p: p.marker.stat().st_mtime, reverse=True)


def recover(partial: PartialRecording | Path) -> float:
    """Make a cut-short recording a clean FLAC again; returns the seconds kept."""
    audio = partial.audio if isinstance(partial, PartialRecording) else Path(partial)
    samples, rate = _decode_what_decodes(audio)
    if len(samples) == 0:
        raise RecordingError(f"{audio.name} holds no audio that can be recovered")
    tmp = audio.with_name(f".{audio.stem}.recovering.flac")
    writer: FlacWriter | None = None
    try:
        writer = FlacWriter(tmp, rate)
        writer.write(samples)
        writer.close()
    except RecordingError:  # e.g. the disk is still full: the partial file stays as it was
        if writer is not None:
            writer.failed = True  # only let go of it
            writer.close()
        tmp.unlink(missing_ok=True)
        marker_path(tmp).unlink(missing_ok=True)
        raise
    os.replace(tmp, audio)
    marker_path(audio).unlink(missing_ok=True)
    return len(samples) / rate


def discard(partial: PartialRecording) -> None:
    """Stop offering `partial` for recovery (the audio file stays)."""
    partial.marker.unlink(missing_ok=True)


def _decode_what_decodes(path: Path) -> tuple[np.ndarray, int]:
    """Mono float32 samples up to the first undecodable frame, and the rate."""
    pieces: list[np.ndarray] = []
    rate = 0
    try:
        with av.open(str(path)) as container:
            stream = container.streams.audio[0]
            rate = stream.rate or stream.codec_context.sample_rate
            for frame in container.decode(stream):
                pieces.append(_mono(frame.to_ndarray()))
    except (av.FFmpegError, IndexError, OSError, ValueError):
        pass  # the cut: keep what decoded before it
    if not rate:
        raise RecordingError(f"{path.name} cannot be read as a recording")
    return (np.concatenate(pieces) if pieces else np.zeros(0, np.float32)), rate


def _mono(frame: np.ndarray) -> np.ndarray:
    """A decoded frame (channels, T) or (1, T*channels) of int16/float as float32 mono (T,)."""
    data = frame.astype(np.float32)
    if frame.dtype == np.int16:
        data /= 32768.0
    elif frame.dtype == np.int32:
        data /= 2147483648.0
    return data.mean(axis=0) if data.ndim == 2 else data
