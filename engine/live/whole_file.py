"""Is a file that stopped growing a whole recording, or a copy that paused half-way?

Contract of `unfinished(path)`: None when the file decodes to its end, else one short reason
("its header promises 20.0 s, 9.9 s are there"). A copy that pauses (a slow network share, a
stalled upload) stops changing for a while but is not complete; what tells is the file itself:
- a WAV whose `data` chunk promises more bytes than the file holds (libsndfile and FFmpeg both
  quietly read what is there, so the header is read here);
- an Ogg whose last page does not carry the end-of-stream flag;
- any file FFmpeg can open whose decoding stops with an error before its end, or whose audio
  ends more than `SLACK_SECONDS` before the length its header states (FLAC's STREAMINFO, an MP3's
  Xing frame count).
The audio is decoded block by block and only counted: memory stays bounded for any length. A file
FFmpeg cannot open at all is not judged here (None): the pipeline reports it as unreadable.
Formats that state no length and have no end mark (a raw MP3 or AAC stream), and containers whose
cut FFmpeg does not report (AVI), cannot be told apart from a paused copy; they are whole as soon
as they stop changing.
"""

from __future__ import annotations

import struct
from pathlib import Path

import av

SLACK_SECONDS = 0.5  # encoder padding and rounding: an MP3's stated length is off by a few frames
_OGG_TAIL = 1 << 16  # bytes read from an Ogg's end to find its last page


def unfinished(path: Path) -> str | None:
    """Why `path` is not yet a whole recording, or None when it decodes to its end."""
    head = _read_head(path)
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return _wav_short(path, head)
    if head[:4] == b"OggS" and not _ogg_ends(path):
        return "its last Ogg page is not the end of the stream"
    return _decodes_short(path)


def _read_head(path: Path, size: int = 4096) -> bytes:
    with path.open("rb") as f:
        return f.read(size)


def _wav_short(path: Path, head: bytes) -> str | None:
    """The WAV's `data` chunk promises more bytes than follow it in the file."""
    at = 12
    while at + 8 <= len(head):
        name, size = head[at : at + 4], struct.unpack("<I", head[at + 4 : at + 8])[0]
        if name == b"data":
            there = path.stat().st_size - (at + 8)
            return f"its header promises {size} bytes of audio, {there} are there" if there < size else None
        at += 8 + size + (size & 1)
    return None  # no data chunk in the first 4 KiB: FFmpeg and the pipeline judge it


def _ogg_ends(path: Path) -> bool:
    """The file's last Ogg page has the end-of-stream flag (header type bit 0x04)."""
    size = path.stat().st_size
    with path.open("rb") as f:
        f.seek(max(0, size - _OGG_TAIL))
        tail = f.read()
    last = tail.rfind(b"OggS")
    return last >= 0 and last + 5 < len(tail) and bool(tail[last + 5] & 0x04)


def _decodes_short(path: Path) -> str | None:
    try:
        container = av.open(str(path), metadata_errors="ignore")
    except (av.FFmpegError, OSError):
        return None  # not judged here: the pipeline says it cannot be read
    with container:
        if not container.streams.audio:
            return None
        stream = container.streams.audio[0]
        stated = float(stream.duration * stream.time_base) if stream.duration and stream.time_base else 0.0
        samples = 0
        try:
            for frame in container.decode(stream):
                samples += frame.samples
        except (av.FFmpegError, OSError) as exc:
            return f"it stops decoding at {samples / (stream.rate or 1):.1f} s ({exc.__class__.__name__})"
    got = samples / (stream.rate or 1)
    if stated and got < stated - SLACK_SECONDS:
        return f"its header promises {stated:.1f} s, {got:.1f} s are there"
    return None
