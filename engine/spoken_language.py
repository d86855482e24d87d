"""The language a transcript is in, from the languages the backend reported per chunk."""

from __future__ import annotations

from collections.abc import Sequence

from engine.types import ChunkResult


def spoken_language(results: Sequence[ChunkResult], default: str = "en") -> str:
    """The transcript's language from the languages the backend reports per chunk (whisper: the
    forced one, or the one it detected): the one decoded over the most speech; `default` when the
    backend reports none."""
    seconds: dict[str, float] = {}
    for r in results:
        if r.language:
            code = r.language.strip().lower()
            seconds[code] = seconds.get(code, 0.0) + sum(s.duration for s in r.chunk.speech) + 1e-6
    return max(seconds, key=lambda code: seconds[code]) if seconds else default
