"""Finite times: the one check that every time in a transcript or project is a usable number.

A time read from a file may be NaN, infinite, or finite but absurd (1e308 s overflows every clock
format and Qt's integer positions). `time_problem(value)` says what is wrong with one value (None
when it is fine); `transcript_time_problem(transcript)` names the first bad field of a transcript,
e.g. `"utterances[3].start is not a finite time (nan)"`; `check_transcript_times` raises
`ValueError` with that text. Loaders turn it into their own typed error; exporters refuse to write.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from engine.types import Transcript

MAX_SECONDS = 1e7  # about 116 days: longer than any recording, far below where clocks overflow


def time_problem(value: float) -> str | None:
    """Why `value` cannot be a time in seconds, or None if it can."""
    if not math.isfinite(value):
        return f"is not a finite time ({value})"
    if abs(value) > MAX_SECONDS:
        return f"is out of range ({value:g} s; at most {MAX_SECONDS:g} s)"
    return None


def transcript_time_problem(transcript: Transcript) -> str | None:
    """The first field of `transcript` whose time is unusable, as "where what", or None."""
    for where, value in _times(transcript):
        problem = time_problem(value)
        if problem is not None:
            return f"{where} {problem}"
    return None


def check_transcript_times(transcript: Transcript) -> None:
    """Raise ValueError naming the first unusable time in `transcript`."""
    problem = transcript_time_problem(transcript)
    if problem is not None:
        raise ValueError(problem)


def _times(t: Transcript) -> Iterator[tuple[str, float]]:
    yield "duration", t.duration
    for i, u in enumerate(t.utterances):
        yield f"utterances[{i}].start", u.start
        yield f"utterances[{i}].end", u.end
        for j, w in enumerate(u.words):
            yield f"utterances[{i}].words[{j}].start", w.start
            yield f"utterances[{i}].words[{j}].end", w.end
    for i, c in enumerate(t.chunks):
        yield f"chunks[{i}].start", c.start
        yield f"chunks[{i}].end", c.end
        for j, s in enumerate(c.speech):
            yield f"chunks[{i}].speech[{j}]", s.start
            yield f"chunks[{i}].speech[{j}]", s.end
