"""Training masks that hide the speech a transcript has left behind, as `speech-anchor` evicts it.

A real speech LLM transcribing a 300 s chunk reads the audio near what it is writing; a tiny model
that memorises three clips is free to recall them from any of their audio, so it changes its words
when speech it has already transcribed leaves the cache, which no eviction rule could avoid. A
recipe with `HiddenSpeech` trains some passes under a mask that hides that speech, so the model
learns to write each turn from the audio around it and from its own text, as the large model does.

`closed_segments` says how many segment objects of the reply are closed once each reply token is
written (where they close: `jsonscan.object_ends`, as the backend reads replies), `anchors` the
anchor that follows.
`hidden_speech_mask(...)` gives the additive (L, L) float mask of one teacher-forced pass: causal,
and for every position of the reply, the speech before `look_back` tokens ahead of the anchor hidden,
except the first `sinks` speech tokens and the last `look_ahead`. The anchor is the one
`engine.decode.anchor` reads from written times: the earliest Start of the last `recent` segments
whose objects are closed in the reply written so far (the token fed included), none until `recent`
are. Times become speech tokens at `rate` per second. Pure torch; nothing here loads a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from engine.decode.layout import ANCHOR_RECENT


@dataclass(frozen=True, slots=True)
class HiddenSpeech:
    """A share of training passes with the speech behind the transcript hidden (see the module)."""

    look_back: tuple[int, int] = (16, 64)  # speech tokens kept before the anchor, drawn per pass
    sinks: int = 8
    look_ahead: int = 32
    recent: int = ANCHOR_RECENT  # the segments whose earliest Start is the anchor, as in decoding

    def __post_init__(self) -> None:
        low, high = self.look_back
        if not 0 <= low <= high:
            raise ValueError(f"look_back must be a range 0 <= low <= high, got {self.look_back}")
        if min(self.sinks, self.look_ahead) < 0 or self.recent < 1:
            raise ValueError("sinks and look_ahead must be >= 0 and recent >= 1")


def closed_segments(token_ends: Sequence[int], object_ends: Sequence[int]) -> list[int]:
    """Per reply token, how many segment objects are closed once it is written: objects whose `}`
    (a character index of the reply) lies before the token's end (`token_ends`, exclusive)."""
    out, closed = [], 0
    for end in token_ends:
        while closed < len(object_ends) and object_ends[closed] < end:
            closed += 1
        out.append(closed)
    return out


def anchors(closed: Sequence[int], starts: Sequence[float], rate: float, recent: int) -> list[int]:
    """Per reply token, the anchor in speech tokens (-1: none yet) after `closed[i]` segments."""
    return [int(min(starts[n - recent : n]) * rate) if n >= recent else -1 for n in closed]


def hidden_speech_mask(
    length: int,
    speech_positions: torch.Tensor,
    reply_start: int,
    anchor_of: Sequence[int],
    hidden: HiddenSpeech,
    look_back: int,
) -> torch.Tensor:  # → (L, L) float: 0 where a position may attend, -inf where not
    """The mask of one pass: `anchor_of[i]` is the anchor once reply token `i` (at position
    `reply_start + i`) is fed; `speech_positions` the sequence positions of the speech tokens."""
    allowed = torch.ones(length, length, dtype=torch.bool).tril()
    count = len(speech_positions)
    index = torch.arange(count)
    always = (index < hidden.sinks) | (index >= count - hidden.look_ahead)
    rows = torch.arange(reply_start, reply_start + len(anchor_of))
    limit = torch.tensor(list(anchor_of)) - look_back  # speech before this index goes (no anchor: < 0)
    limit[torch.tensor(list(anchor_of)) < 0] = 0
    inside = rows < length
    gone = (index[None, :] < limit[inside, None]) & ~always[None, :]  # (rows, speech)
    allowed[rows[inside, None], speech_positions[None, :]] &= ~gone
    mask = torch.zeros(length, length)
    return mask.masked_fill(~allowed, float("-inf"))
