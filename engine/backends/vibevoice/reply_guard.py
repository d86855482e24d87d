"""Limits on what a VibeVoice server may send back for one chunk, since the server is not ours.

- `reply_cap(budget)`: the most bytes a reply for a chunk with a `budget`-token limit may take
  (`BYTES_PER_TOKEN` per token, escapes included, plus `OVERHEAD_BYTES` for the envelope); more is
  refused by the HTTP layer.
- `over_budget(completion_tokens, budget)`: whether the server says it generated more tokens than
  it was allowed (the reply is then refused).
- `guarded(segments, budget)`: the loop guard and the token budget applied to parsed segments: a
  run of `LOOP_REPEATS` or more identical consecutive segments is a loop and is cut after its
  first repetition (as the local decoder's salvage does), with `FinishReason.LOOP`; segments past
  what `budget` tokens can hold (`MIN_SEGMENT_TOKENS` each) are cut with `FinishReason.LENGTH`.
- `count(value)`: a token count from a reply's `usage`, 0 for anything that is not a plain
  non-negative integer (infinity, lists, strings).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from engine.types import FinishReason, Segment

BYTES_PER_TOKEN = 32
OVERHEAD_BYTES = 64 * 1024
LOOP_REPEATS = 4
MIN_SEGMENT_TOKENS = 8  # the keys and times of one segment object alone take more
_MAX_COUNT = 10**9


def reply_cap(budget: int) -> int:
    return OVERHEAD_BYTES + BYTES_PER_TOKEN * max(budget, 0)


def over_budget(completion_tokens: int, budget: int) -> bool:
    return completion_tokens > budget + budget // 20 + 16  # servers count a stop token or two


def count(value: Any) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_COUNT
    return value if ok else 0


def guarded(segments: Sequence[Segment], budget: int) -> tuple[tuple[Segment, ...], FinishReason | None]:
    """`segments` with loops and over-budget tails cut, and why they were cut (None: nothing was)."""
    keys = [(s.speaker, re.sub(r"\W+", " ", s.text.lower()).strip()) for s in segments]
    run = 1
    for i in range(1, len(keys)):
        run = run + 1 if keys[i] == keys[i - 1] else 1
        if run == LOOP_REPEATS:
            return tuple(segments[: i - LOOP_REPEATS + 3]), FinishReason.LOOP  # the first and one repeat
    most = max(1, budget // MIN_SEGMENT_TOKENS)
    if len(segments) > most:
        return tuple(segments[:most]), FinishReason.LENGTH
    return tuple(segments), None
