"""Deciding which found speaker is which known voice: precision first.

Contract of `match_speakers(speakers, voices, config)`:
- `speakers` maps a transcript's speaker id to one unit embedding of its speech; `voices` maps a
  known person's name to the unit centroid of their stored samples (same embedding model).
- A speaker is named only when its best cosine similarity reaches `threshold` AND beats the
  second-best person's by at least `margin` (a single known person has no second best: the
  threshold alone decides). A wrong name is worse than none.
- One person names at most one speaker: when two speakers clear the bar for the same person, the
  higher score keeps the name and the other stays unnamed (ties: the speaker listed first).
- The result maps each named speaker id to its `Match` (name, score, runner-up score); speakers
  left out keep their default label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

# calibrated by bench/known_voices.py on recordings kept apart from those it scores (docs/speakers.md)
THRESHOLD = 0.91
MARGIN = 0.12
MIN_SECONDS = 4.0


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """When a found speaker gets a known name."""

    threshold: float = THRESHOLD  # least cosine similarity to the person's centroid
    margin: float = MARGIN  # least lead over the second most similar person
    min_seconds: float = MIN_SECONDS  # least speech of a speaker before it is compared at all

    def __post_init__(self) -> None:
        if not -1.0 <= self.threshold <= 1.0:
            raise ValueError(f"the match threshold is a cosine similarity in [-1, 1], got {self.threshold}")
        if not 0.0 <= self.margin <= 2.0:
            raise ValueError(f"the match margin must be in [0, 2], got {self.margin}")
        if self.min_seconds < 0:
            raise ValueError(f"the least speech to compare cannot be negative, got {self.min_seconds}")


@dataclass(frozen=True, slots=True)
class Match:
    """A found speaker recognised as a known person."""

    speaker: str
    name: str
    score: float  # cosine similarity to the person's centroid
    runner_up: float | None  # the second most similar person's, None when only one is known


def match_speakers(
    speakers: Mapping[str, np.ndarray],
    voices: Mapping[str, np.ndarray],
    config: MatchConfig | None = None,
) -> dict[str, Match]:
    """Named speakers (see the module contract)."""
    config = config or MatchConfig()
    if not speakers or not voices:
        return {}
    names = list(voices)
    table = np.stack([voices[n] for n in names])  # (P, D)
    candidates: list[Match] = []
    for speaker, embedding in speakers.items():
        match = _best(speaker, table @ embedding, names)
        if _clear(match, config):
            candidates.append(match)
    winners: dict[str, Match] = {}
    for match in candidates:  # one speaker per person: the most similar keeps the name
        held = winners.get(match.name)
        if held is None or match.score > held.score:
            winners[match.name] = match
    return {m.speaker: m for m in winners.values()}


def _best(speaker: str, scores: np.ndarray, names: list[str]) -> Match:
    order = np.argsort(-scores, kind="stable")
    runner_up = float(scores[order[1]]) if len(order) > 1 else None
    return Match(speaker, names[int(order[0])], float(scores[order[0]]), runner_up)


def _clear(match: Match, config: MatchConfig) -> bool:
    if match.score < config.threshold:
        return False
    return match.runner_up is None or match.score - match.runner_up >= config.margin
