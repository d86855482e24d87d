"""What the two decoders (`engine.audio.sf_source`, `engine.audio.av_source`) hand to `load_audio`.

A decoder yields `(Header, block)` pairs: `block` is mono float32 (T,) at the source rate, and
`Header` is what the file says about itself before decoding. The helpers here build the
`AudioDecodeError`s both decoders raise, with times written as h:mm:ss (or "an unknown length"
when a header's duration is not a plausible number).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import av
import numpy as np

from engine.errors import AudioDecodeError

_PLAUSIBLE_S = 1000 * 3600.0  # a header claiming more than 1,000 hours is nonsense


class Header(NamedTuple):
    """What the file says about itself before decoding."""

    rate: int  # source sample rate, Hz
    total_s: float  # duration from the headers (0.0 when unknown)
    exact: bool  # the container states its length exactly, so a shorter decode means damage


Blocks = Iterator[tuple[Header, np.ndarray]]  # mono float32 blocks at the source rate
Mix = Callable[[np.ndarray], np.ndarray]  # (channels, frames) → (frames,), float32


def plausible_seconds(seconds: float) -> float:
    """`seconds` when it is a duration a real file can have, else 0.0 (unknown)."""
    return seconds if math.isfinite(seconds) and 0 <= seconds <= _PLAUSIBLE_S else 0.0


def downmix(channels: np.ndarray) -> np.ndarray:
    """(channels, frames) float32 → (frames,) float32, the mean of the channels."""
    if channels.shape[0] == 1:
        return channels[0]
    return channels.mean(axis=0, dtype=np.float32)


def clock(seconds: float) -> str:
    """h:mm:ss, or "an unknown length" for a time no file can have."""
    if not plausible_seconds(seconds) and seconds != 0:
        return "an unknown length"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


def reason(exc: Exception) -> str:
    text = str(getattr(exc, "strerror", None) or exc or type(exc).__name__).strip().rstrip(".")
    return text.removeprefix("Error").lstrip(" :") or type(exc).__name__


def damaged(path: Path, at_s: float, exc: Exception) -> AudioDecodeError:
    return AudioDecodeError(f"'{path.name}' is damaged: decoding failed at {clock(at_s)} ({reason(exc)})")


def unreadable(path: Path, exc: Exception, supported: frozenset[str]) -> AudioDecodeError:
    ext = path.suffix.lower()
    invalid = isinstance(exc, av.error.InvalidDataError)
    why = "unrecognised or damaged data" if invalid else reason(exc)
    if ext not in supported:
        why = f"'{ext or 'no extension'}' is not a supported format; {why}"
    return AudioDecodeError(f"'{path.name}' is not an audio file this app can read ({why})")
