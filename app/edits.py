"""Utterance edits as pure functions on frozen `Utterance`s (the undo commands apply their results).

- `set_text` keeps the timings of the words an edit leaves unchanged (`align_words`: difflib), so
  word highlighting, click-to-seek and word-timed exports keep working on edited lines.
- `split(u, cursor)` cuts at a character position: at a word boundary when the utterance has word
  timings (the right half starts at its first word), else at the time proportional to the text.
- `word_at(u, cursor)` the timed word at a text position (for "click a word to seek there").
- `merge(a, b)` joins an utterance with the next one (the first one's speaker wins).
- `retime(u, start, end, duration)` moves the boundaries, refusing an empty or reversed span.
- `find_matches` / `replace_text` / `replace_all` implement find and replace.
- `empty_after` (insert a line), `shift(utterances, seconds)` (every time moved, for trimmed
  recordings), `merge_runs` (consecutive lines of one speaker joined), `runs` (rows as runs).
Every refusal is a `ValueError` with a message a user understands.
"""

from __future__ import annotations

import difflib
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.types import Utterance, Word

MIN_DURATION = 0.05  # seconds: the shortest utterance an edit may leave
EMPTY_SECONDS = 1.0  # length of an inserted empty line
PUNCTUATION = string.punctuation + " “”‘’«»…—–¿¡"


@dataclass(frozen=True, slots=True)
class Match:
    row: int
    start: int  # character offsets in the row's text
    end: int


def _letters(text: str) -> str:
    return "".join(text.split())


def words_spell_text(u: Utterance) -> bool:
    return bool(u.words) and _letters("".join(w.text for w in u.words)) == _letters(u.text)


def word_at(u: Utterance, cursor: int) -> Word | None:
    """The word whose letters the text position `cursor` falls in or just after (None without
    word timings that spell the text)."""
    if not words_spell_text(u):
        return None
    letters = len(_letters(u.text[:cursor]))
    seen = 0
    for w in u.words:
        seen += len(_letters(w.text))
        if letters <= seen:
            return w
    return u.words[-1]


def set_text(u: Utterance, text: str) -> Utterance:
    """`u` with new text; the words keep their timings where they are unchanged (`align_words`)."""
    text = " ".join(text.split())
    if not u.words or _letters(text) == _letters(u.text):
        return replace(u, text=text, words=u.words if u.words and text else ())
    return replace(u, text=text, words=align_words(u, text.split()))


def _key(token: str) -> str:
    """A word as the alignment compares it: without case and surrounding punctuation."""
    return token.strip(PUNCTUATION).lower()


def align_words(u: Utterance, tokens: Sequence[str]) -> tuple[Word, ...]:
    """Timed words for `tokens` (the new text's words) from `u.words`: a standard sequence
    alignment (difflib) of the old and new words, compared without case and punctuation.
    An unchanged word keeps its times and probability (and takes the new spelling, e.g. "!" for
    "."); a changed run shares the time of the words it replaces, in proportion to its letters;
    an inserted run fills the pause where it was inserted. Same word count: paired in order."""
    old = u.words
    space = " " if old[0].text.startswith(" ") else ""
    if len(tokens) == len(old):  # Replace All's usual case: only the replaced words are rebuilt
        pairs = zip(old, tokens, strict=True)
        return tuple(w if w.text.strip() == t else _respelled(w, space + t) for w, t in pairs)
    matcher = difflib.SequenceMatcher(None, [_key(w.text) for w in old], [_key(t) for t in tokens], False)
    out: list[Word] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out += [replace(w, text=space + t) for w, t in zip(old[i1:i2], tokens[j1:j2], strict=True)]
        elif j2 > j1:  # replace or insert: spread over the replaced words or the pause
            lo = old[i1].start if i2 > i1 else (old[i1 - 1].end if i1 else u.start)
            hi = old[i2 - 1].end if i2 > i1 else (old[i1].start if i1 < len(old) else u.end)
            out += _spread(tokens[j1:j2], lo, max(hi, lo), space)
    return tuple(out)


def _respelled(w: Word, text: str) -> Word:
    """`w` spelled `text`: its times, and its probability while it is the same word."""
    return Word(w.start, w.end, text, w.probability if _key(text) == _key(w.text) else None)


def _spread(tokens: Sequence[str], start: float, end: float, space: str) -> list[Word]:
    """Words for `tokens` sharing [start, end] in proportion to their letters."""
    sizes = [max(len(t), 1) for t in tokens]
    total, at, out = sum(sizes), start, []
    for t, n in zip(tokens, sizes, strict=True):
        step = (end - start) * n / total
        out.append(Word(at, at + step, space + t))
        at += step
    return out


def split(u: Utterance, cursor: int) -> tuple[Utterance, Utterance]:
    """Two utterances: text before `cursor` and after it, with a matching split time."""
    left, right = u.text[:cursor].strip(), u.text[cursor:].strip()
    if not left or not right:
        raise ValueError("place the cursor inside the text to split it")
    if words_spell_text(u):
        words_left, words_right = _split_words(u.words, len(_letters(u.text[:cursor])))
        if words_left and words_right:
            at = words_right[0].start
            if u.start + MIN_DURATION <= at <= u.end - MIN_DURATION:
                return (
                    Utterance(u.start, at, left, u.speaker, words_left),
                    Utterance(at, u.end, right, u.speaker, words_right),
                )
    if u.duration < 2 * MIN_DURATION:
        raise ValueError("this utterance is too short to split")
    at = u.start + u.duration * len(u.text[:cursor].rstrip()) / max(len(u.text), 1)
    at = min(max(at, u.start + MIN_DURATION), u.end - MIN_DURATION)
    return Utterance(u.start, at, left, u.speaker), Utterance(at, u.end, right, u.speaker)


def _split_words(words: Sequence[Word], letters_before: int) -> tuple[tuple[Word, ...], tuple[Word, ...]]:
    """Words whose letters lie before the cut, and the rest (a word cut in two goes right)."""
    seen = 0
    for i, w in enumerate(words):
        if seen >= letters_before:
            return tuple(words[:i]), tuple(words[i:])
        seen += len(_letters(w.text))
    return tuple(words), ()


def merge(first: Utterance, second: Utterance) -> Utterance:
    """One utterance covering both, texts joined with a space; the first one's speaker."""
    return merge_all((first, second))


def merge_all(lines: Sequence[Utterance]) -> Utterance:
    """One utterance covering all `lines` (in order), texts joined with a space, the first one's
    speaker; their words when every line's words spell its text, else none."""
    text = " ".join(t for t in (u.text.strip() for u in lines) if t)
    words = tuple(w for u in lines for w in u.words) if all(map(words_spell_text, lines)) else ()
    start, end = min(u.start for u in lines), max(u.end for u in lines)
    return Utterance(start, end, text, lines[0].speaker, words)


def retime(u: Utterance, start: float, end: float, duration: float) -> Utterance:
    """`u` spanning [start, end]; words outside the new span are clamped into it."""
    if start < 0 or (duration > 0 and end > duration + 1e-6):
        raise ValueError("times must lie inside the recording")
    if end - start < MIN_DURATION:
        raise ValueError("the end must come after the start")
    words = tuple(
        replace(w, start=min(max(w.start, start), end), end=min(max(w.end, start), end)) for w in u.words
    )
    return replace(u, start=start, end=end, words=words)


def search_pattern(
    query: str, case_sensitive: bool = False, regex: bool = False, whole_words: bool = False
) -> re.Pattern[str]:
    """The compiled search: `query` literally, or as a regular expression with `regex`;
    `whole_words` only where it starts and ends at word boundaries. ValueError (with the reason)
    for an empty query or a regular expression that does not compile."""
    if not query:
        raise ValueError("type something to find")
    body = query if regex else re.escape(query)
    if whole_words:
        body = rf"\b(?:{body})\b"
    try:
        return re.compile(body, 0 if case_sensitive else re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"not a valid pattern: {exc}") from None


def find_matches(
    texts: Sequence[str], query: str, case_sensitive: bool = False, regex: bool = False,
    whole_words: bool = False,
) -> list[Match]:
    """Every occurrence of `query` in `texts`, in reading order; ValueError for a pattern that
    matches empty text (nothing to show or replace there)."""
    pattern = search_pattern(query, case_sensitive, regex, whole_words)
    found = [Match(row, m.start(), m.end()) for row, text in enumerate(texts) for m in pattern.finditer(text)]
    if any(m.start == m.end for m in found):
        raise ValueError("the pattern matches empty text")
    return found


def replace_text(
    text: str, query: str, replacement: str, case_sensitive: bool = False, regex: bool = False,
    whole_words: bool = False,
) -> tuple[str, int]:
    """`text` with every occurrence of `query` replaced, and how many there were. With `regex`
    the replacement may name groups (`\\1`, `\\g<name>`); otherwise it is taken literally."""
    pattern = search_pattern(query, case_sensitive, regex, whole_words)
    if not regex:
        return pattern.subn(lambda _: replacement, text)
    try:
        return pattern.subn(replacement, text)
    except (re.error, IndexError) as exc:
        raise ValueError(f"not a valid replacement: {exc}") from None


def replace_all(
    utterances: Sequence[Utterance], query: str, replacement: str, case_sensitive: bool = False,
    regex: bool = False, whole_words: bool = False,
) -> tuple[tuple[Utterance, ...], int]:
    """All utterances with `query` replaced everywhere, and the number of replacements."""
    total, out = 0, []
    for u in utterances:
        text, n = replace_text(u.text, query, replacement, case_sensitive, regex, whole_words)
        total += n
        out.append(set_text(u, text) if n else u)
    return tuple(out), total


def runs(rows: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted rows as (first, last) runs of consecutive numbers."""
    out: list[tuple[int, int]] = []
    for r in rows:
        if out and r == out[-1][1] + 1:
            out[-1] = (out[-1][0], r)
        else:
            out.append((r, r))
    return out


def empty_after(u: Utterance | None, at: float, duration: float) -> Utterance:
    """An empty line of `EMPTY_SECONDS` after `u` (same speaker), else at time `at`."""
    start = u.end if u is not None else max(at, 0.0)
    if duration > 0:
        start = min(start, max(duration - EMPTY_SECONDS, 0.0))
    return Utterance(start, start + EMPTY_SECONDS, "", u.speaker if u is not None else None)


def check_shift(first_start: float, seconds: float) -> None:
    """Refuse a shift that would move the earliest line (starting at `first_start`) before 0."""
    if first_start + seconds < -1e-9:
        raise ValueError(f"the first line starts at {first_start:.2f} s: it cannot move {seconds:+.2f} s")


def shifted(u: Utterance, seconds: float, start: float | None = None, end: float | None = None) -> Utterance:
    """`u` and its words moved by `seconds` (`start`/`end`: the line's times when already known)."""
    words = tuple(Word(w.start + seconds, w.end + seconds, w.text, w.probability) for w in u.words)
    start = u.start + seconds if start is None else start
    return Utterance(start, u.end + seconds if end is None else end, u.text, u.speaker, words)


def shift(utterances: Sequence[Utterance], seconds: float) -> tuple[Utterance, ...]:
    """Every utterance and word moved by `seconds`; refused if a line would start before 0."""
    if utterances:
        check_shift(min(u.start for u in utterances), seconds)
    return tuple(shifted(u, seconds) for u in utterances)


def merge_runs(utterances: Sequence[Utterance]) -> tuple[Utterance, ...]:
    """Consecutive utterances of the same (assigned) speaker joined into one (`merge`)."""
    groups: list[list[Utterance]] = []
    for u in utterances:
        if groups and u.speaker is not None and groups[-1][0].speaker == u.speaker:
            groups[-1].append(u)
        else:
            groups.append([u])
    return tuple(g[0] if len(g) == 1 else merge_all(g) for g in groups)
