"""Token budgets: how many new tokens a chunk of `d` seconds may generate.

A budget rule maps a duration to a raw token count; `token_budget` clamps it into the config's
[min_new_tokens, max_new_tokens]. Rules, chosen by name from `BUDGET_RULES`:

- "paper" (default): ⌊32768·d/3600⌋, the Murmur paper's rule: the checkpoint's 32768-token limit
  spread evenly over its one-hour maximum input (≈9.1 tokens per second of audio).
- "murmur": ⌊12·d⌋, the upstream Murmur code's heuristic (more room for dense speech).
- "max": always the ceiling (the checkpoint's own default of 32768).

The floor (256 by default) keeps short chunks from being cut off inside their first segment: the
reply's header and first segment's keys alone take about 25 tokens.
"""

from __future__ import annotations

import math
from typing import Protocol

from engine.backends.vibevoice.config import MAX_TOKENS, VibeVoiceConfig


class BudgetRule(Protocol):
    def __call__(self, duration: float) -> int: ...


def paper_rule(duration: float) -> int:
    return math.floor(MAX_TOKENS * duration / 3600.0)


def murmur_rule(duration: float) -> int:
    return math.floor(12.0 * duration)


def max_rule(duration: float) -> int:
    return MAX_TOKENS


BUDGET_RULES: dict[str, BudgetRule] = {"paper": paper_rule, "murmur": murmur_rule, "max": max_rule}


def token_budget(duration: float, config: VibeVoiceConfig) -> int:
    """The `max_new_tokens` of a chunk lasting `duration` seconds under `config`."""
    if duration < 0:
        raise ValueError(f"duration must be non-negative, got {duration}")
    raw = BUDGET_RULES[config.budget](duration)
    return min(max(raw, config.min_new_tokens), config.max_new_tokens)
