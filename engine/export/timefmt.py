"""Time stamps as the export formats spell them; every exporter formats times through here.

`srt_time(61.5) == "00:01:01,500"`, `vtt_time(61.5) == "00:01:01.500"`, `clock(3723.9) == "01:02:03"`.
Negative times print as zero; hours grow past two digits when needed.
"""

from __future__ import annotations

import math


def _milliseconds(seconds: float) -> int:
    return max(0, round(seconds * 1000))


def _hms_ms(seconds: float, separator: str) -> str:
    h, rest = divmod(_milliseconds(seconds), 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{separator}{ms:03d}"


def srt_time(seconds: float) -> str:
    """SubRip time: `hh:mm:ss,mmm`."""
    return _hms_ms(seconds, ",")


def vtt_time(seconds: float) -> str:
    """WebVTT time: `hh:mm:ss.mmm`."""
    return _hms_ms(seconds, ".")


def clock(seconds: float) -> str:
    """Reading time `hh:mm:ss`, truncated to the second (a stamp never points past its words)."""
    whole = max(0, math.floor(seconds)) if math.isfinite(seconds) else 0
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return f"{h:02d}:{m:02d}:{s:02d}"
