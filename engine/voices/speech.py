"""Which stretches of a recording are one speaker's own voice, as pure functions on times.

Contract:
- `own_spans(utterances, speaker)`: that speaker's utterance times with every stretch another
  speaker also talks cut out (overlapped speech would mix two voices), in time order; spans
  shorter than `MIN_SPAN` are dropped.
- `longest_first(spans, seconds)`: the longest spans up to `seconds` of speech in all (then back in
  time order), so one speaker's embedding costs bounded audio whatever the recording's length.
- `groups(spans, seconds)`: consecutive spans gathered into groups of about `seconds` of speech
  each (the last group joins the one before when it holds less than half that): one stored sample
  per group, each with its own time range.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.types import Utterance

Span = tuple[float, float]
MIN_SPAN = 0.2  # seconds


def own_spans(utterances: Sequence[Utterance], speaker: str) -> list[Span]:
    """`speaker`'s speech without the stretches anyone else talks over (see the contract)."""
    others = sorted((u.start, u.end) for u in utterances if u.speaker not in (None, speaker))
    out: list[Span] = []
    for u in sorted((u for u in utterances if u.speaker == speaker), key=lambda u: u.start):
        out += _cut(u.start, u.end, others)
    return [(a, b) for a, b in out if b - a >= MIN_SPAN]


def _cut(start: float, end: float, others: Sequence[Span]) -> list[Span]:
    pieces: list[Span] = []
    cursor = start
    for a, b in others:
        if b <= cursor or a >= end:
            continue
        if a > cursor:
            pieces.append((cursor, a))
        cursor = max(cursor, b)
        if cursor >= end:
            break
    if cursor < end:
        pieces.append((cursor, end))
    return pieces


def seconds(spans: Sequence[Span]) -> float:
    return sum(b - a for a, b in spans)


def longest_first(spans: Sequence[Span], limit: float) -> list[Span]:
    """The longest spans until `limit` seconds are reached, in time order (see the contract)."""
    chosen: list[Span] = []
    total = 0.0
    for span in sorted(spans, key=lambda s: s[0] - s[1]):
        if total >= limit:
            break
        chosen.append(span)
        total += span[1] - span[0]
    return sorted(chosen)


def groups(spans: Sequence[Span], size: float) -> list[list[Span]]:
    """Consecutive spans in groups of about `size` seconds of speech (see the contract)."""
    out: list[list[Span]] = []
    current: list[Span] = []
    for span in spans:
        current.append(span)
        if seconds(current) >= size:
            out.append(current)
            current = []
    if current:
        if out and seconds(current) < size / 2:
            out[-1] += current
        else:
            out.append(current)
    return out
