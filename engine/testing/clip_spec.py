"""What the clips a tiny checkpoint trains on look like: `ClipSpec`, part of its recipe.

A frozen value (so it hashes into the recipe's cache key with everything else): the range every
clip's length falls in, turns and voices per clip (clip `i` takes the `i`-th value, cycling), and
words per sentence. Ranges are validated here with `ValueError`; that the roster has enough voices
is checked where clips are made (`tiny_clips.synthesize_clips`). Imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ClipSpec:
    """What every clip of a recipe looks like: clip `i` has `turns[i mod len]` turns spoken by
    `voices[i mod len]` voices, sentences of `words` words (inclusive), and lasts `seconds`."""

    seconds: tuple[float, float] = (5.0, 9.0)
    turns: tuple[int, ...] = (2, 3)
    voices: tuple[int, ...] = (2,)
    words: tuple[int, int] = (1, 9)  # short sentences keep the targets short

    def __post_init__(self) -> None:
        for name in ("seconds", "words"):
            low, high = getattr(self, name)
            if not 0 < low <= high:
                raise ValueError(f"clip {name} must be a range 0 < low <= high, got ({low}, {high})")
        if not self.turns or min(self.turns) < 1:
            raise ValueError(f"every clip needs at least one turn, got {self.turns}")
        if not self.voices or min(self.voices) < 2:
            raise ValueError(f"a clip has at least 2 voices, got {self.voices}")

    def of(self, index: int) -> tuple[int, int]:
        """(turns, voices) of clip `index`."""
        return self.turns[index % len(self.turns)], self.voices[index % len(self.voices)]
