"""Subtitle cues: an utterance split into readable pieces, each with its own timing.

`split_utterance(utterance, layout, prefix)` gives cues of at most `layout.max_lines` lines of at
most `layout.max_chars` characters (the `prefix`, e.g. "Alice:", opens every cue and counts), lasting
at most `layout.max_seconds`; a single word that is longer or slower still gets a cue of its own.
A word longer than a line is cut into line-sized pieces. Cuts make few, evenly filled cues and
prefer sentence ends, then clause ends; two-line cues are balanced. Cue times follow the
utterance's word timings when its words spell the same text (ignoring whitespace); otherwise the
utterance's time is shared out in proportion to characters.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from engine.types import Utterance

_SENTENCE_END = (".", "?", "!", "…", "。", "？", "！")
_CLAUSE_END = (",", ";", ":", "，", "；", "：", "—")


@dataclass(frozen=True, slots=True)
class CueLayout:
    """Limits of one subtitle cue."""

    max_chars: int = 42
    max_lines: int = 2
    max_seconds: float = 7.0

    def __post_init__(self) -> None:
        if self.max_chars < 8:
            raise ValueError(f"a cue line needs at least 8 characters, got {self.max_chars}")
        if self.max_lines < 1:
            raise ValueError(f"a cue needs at least one line, got {self.max_lines}")
        if not self.max_seconds > 0:
            raise ValueError(f"cue duration limit must be positive, got {self.max_seconds}")


@dataclass(frozen=True, slots=True)
class Cue:
    """One subtitle: absolute seconds and the lines shown."""

    start: float
    end: float
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    start: float
    end: float


def split_utterance(utterance: Utterance, layout: CueLayout, prefix: str = "") -> list[Cue]:
    """Readable cues covering `utterance`'s text, in order; none for an empty text."""
    tokens = _timed_tokens(utterance, layout.max_chars)
    cues = []
    for group in _group(tokens, layout, prefix):
        words = [prefix, *(t.text for t in group)] if prefix else [t.text for t in group]
        lines = wrap(words, layout.max_chars, layout.max_lines) or _greedy(words, layout.max_chars)
        cues.append(Cue(group[0].start, max(group[-1].end, group[0].start), tuple(lines)))
    return cues


def wrap(words: Sequence[str], max_chars: int, max_lines: int) -> list[str] | None:
    """`words` laid out in at most `max_lines` lines of `max_chars`, or None if they do not fit."""
    lines = _greedy(words, max_chars)
    if len(lines) > max_lines or any(len(line) > max_chars for line in lines):
        return None
    return _balanced(words) if len(lines) == 2 else lines


def _greedy(words: Sequence[str], max_chars: int) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in words:
        if line and len(line) + 1 + len(word) > max_chars:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line]


def _balanced(words: Sequence[str]) -> list[str]:
    """The two-line split whose longer line is shortest (the top line is shorter on a tie)."""
    splits = ([" ".join(words[:k]), " ".join(words[k:])] for k in range(1, len(words)))
    return min(splits, key=lambda pair: (max(len(pair[0]), len(pair[1])), len(pair[0])))


def _group(tokens: list[_Token], layout: CueLayout, prefix: str) -> list[list[_Token]]:
    """Tokens cut into cues that fit, choosing the cuts of least cost (a small dynamic program).

    A cue costs its squared unused room (in characters or seconds, whichever is fuller), so cues
    come out few and even; a cut that is not at a sentence end costs extra, so cuts land between
    sentences (or at least clauses) when that is nearly as even.
    """
    room = layout.max_chars * layout.max_lines
    best = [0.0] + [math.inf] * len(tokens)
    cut = [0] * (len(tokens) + 1)
    for i in range(1, len(tokens) + 1):
        lengths = [len(prefix)] if prefix else []
        chars = len(prefix)
        cut_cost = _cut_cost(tokens, i)
        for j in range(i - 1, -1, -1):
            lengths.insert(1 if prefix else 0, len(tokens[j].text))
            chars += len(tokens[j].text) + (1 if chars else 0)
            if j < i - 1 and (chars > room or not _fits(tokens[j], tokens[i - 1], lengths, layout)):
                break
            fill = max(chars / room, (tokens[i - 1].end - tokens[j].start) / layout.max_seconds)
            cost = best[j] + (1 - min(fill, 1.0)) ** 2 + cut_cost
            if cost < best[i]:
                best[i], cut[i] = cost, j
    groups = []
    i = len(tokens)
    while i > 0:
        groups.append(tokens[cut[i] : i])
        i = cut[i]
    return groups[::-1]


def _fits(first: _Token, last: _Token, lengths: list[int], layout: CueLayout) -> bool:
    if last.end - first.start > layout.max_seconds or max(lengths) > layout.max_chars:
        return False
    lines, width = 1, -1
    for n in lengths:
        if width + 1 + n > layout.max_chars:
            lines, width = lines + 1, n
        else:
            width += 1 + n
    return lines <= layout.max_lines


def _cut_cost(tokens: list[_Token], i: int) -> float:
    """Cost of ending a cue after token i - 1: none at the end or after a sentence, some after a clause."""
    if i == len(tokens) or tokens[i - 1].text.endswith(_SENTENCE_END):
        return 0.0
    return 0.1 if tokens[i - 1].text.endswith(_CLAUSE_END) else 0.3


def _timed_tokens(utterance: Utterance, max_chars: int) -> list[_Token]:
    text = utterance.text
    spans = [
        (m.start() + i, min(m.start() + i + max_chars, m.end()))
        for m in re.finditer(r"\S+", text)
        for i in range(0, m.end() - m.start(), max_chars)
    ]
    if not spans:
        return []
    times = _word_times(utterance, spans) or _proportional_times(utterance, spans)
    return [_Token(text[a:b], s, e) for (a, b), (s, e) in zip(spans, times, strict=True)]


def _word_times(u: Utterance, spans: list[tuple[int, int]]) -> list[tuple[float, float]] | None:
    """Token times from the words, if the words spell the text; else None."""
    timed = [(w.start, w.end) for w in u.words for c in w.text if not c.isspace()]
    spelled = "".join(c for w in u.words for c in w.text if not c.isspace())
    if not timed or spelled != "".join(c for c in u.text if not c.isspace()):
        return None
    rank = list(itertools.accumulate((not c.isspace() for c in u.text), initial=0))
    lo, hi = u.start, max(u.end, u.start)
    times = []
    for a, b in spans:
        start = min(max(timed[rank[a]][0], lo), hi)
        times.append((start, min(max(timed[rank[b] - 1][1], start), hi)))
    return times


def _proportional_times(u: Utterance, spans: list[tuple[int, int]]) -> list[tuple[float, float]]:
    """Token times shared out by character offset; each token lasts until the next one starts."""
    first, last = spans[0][0], spans[-1][1]
    lo, hi = u.start, max(u.end, u.start)
    scale = (hi - lo) / max(last - first, 1)
    starts = [lo + (a - first) * scale for a, _ in spans]
    return list(zip(starts, [*starts[1:], hi], strict=True))
