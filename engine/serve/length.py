"""An upload's length, measured by decoding it: a header's word is never taken for it.

`measure(path, max_seconds)` decodes the audio stream a job would use (the default one) through
FFmpeg, block by block, counting samples, and raises `TooLong` the moment the count passes
`max_seconds`, so a file that states no length (a browser's WebM, a stream piped to disk), states
a wrong one, or chains several (an Ogg of many links) is measured the same way and is never
decoded further than the limit. One block (about a second of audio) is held at a time: memory
stays flat whatever the file says. A file that is not audio, or fails to decode, raises
`AudioDecodeError` as `load_audio` would.

`client_text(text, path, name)` puts the client's file name in place of the upload's private one
(warnings, errors); `decode_failure(exc, path, name)` also drops a trailing FFmpeg reason in
parentheses, leaving one plain sentence.
"""

from __future__ import annotations

import re
from pathlib import Path

import av

from engine.audio.av_source import av_blocks, av_open, default_index
from engine.audio.blocks import damaged
from engine.audio.io import SUPPORTED_EXTENSIONS

_REASON = re.compile(r" \([^()]*\)$")  # "… decoding failed at 0:00:03 (Invalid data found …)"


class TooLong(ValueError):
    """The recording is longer than the server takes."""


def measure(path: Path, max_seconds: float) -> float:
    """Seconds of audio in `path`, decoded (see the module contract); `TooLong` past `max_seconds`."""
    with av_open(path, SUPPORTED_EXTENSIONS) as container:
        index = default_index(container)  # chosen here, so the job's own decode warns, not this one
    seconds = 0.0
    try:
        for header, block in av_blocks(path, SUPPORTED_EXTENSIONS, index):
            seconds += len(block) / header.rate
            if seconds > max_seconds:
                hours = max_seconds / 3600
                raise TooLong(f"the recording is longer than this server's limit of {hours:g} hours")
    except av.FFmpegError as exc:
        raise damaged(path, seconds, exc) from exc
    return seconds


def client_text(text: str, path: Path | None, name: str) -> str:
    """`text` (a warning or an error about the upload) with the client's file name for the private one."""
    if path is None:
        return text
    quoted = f"'{name}'" if name else "the file"
    return text.replace(f"'{path.name}'", quoted).replace(path.name, name or "the file")


def decode_failure(exc: Exception, path: Path | None, name: str) -> str:
    """A decode error as one plain sentence for the client: its file name, no FFmpeg reason."""
    text = _REASON.sub("", client_text(str(exc), path, name))
    return text.replace("this app can read", "this server can read")
