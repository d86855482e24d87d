"""Spell checking of the transcript in its language, free of Qt.

`Speller.load(language, own_words)` reads the word list that the `pyspellchecker` package ships
for the language (en, de, es, fr, it, nl, pt, ru, ar, fa, lv, eu), or returns None where there is
none. `misspelled(text)` gives the (start, end) character spans of unknown words: numbers, words
written in capitals (acronyms) and the user's own words are never flagged; an apostrophe joins
(`don't`). `suggestions(word)` the likeliest corrections, most frequent first, with the word's
capitalisation; `add(word)` learns a word for this session (the window remembers them).
`next_misspelling(texts, row, offset)` finds the next unknown word across lines, wrapping once.
"""

from __future__ import annotations

import gzip
import json
import pkgutil
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
MAX_SUGGESTIONS = 5
PIECE = 16384  # characters of the word list parsed at once (about 0.4 ms each)
WORDS_AT_ONCE = 1000  # words loaded into the checker per slice (about a millisecond each)
PAUSE_S = 0.004  # the loader's sleep after each piece or slice, so the window gets the interpreter
_NEXT_ENTRY = re.compile(r',\s*"')


def _checker(language: str) -> Any:
    """pyspellchecker's checker for `language`, its word list parsed and loaded piece by piece: the
    package parses the whole list in one call, which holds the interpreter for about 0.2 s (the
    window, which shares it, froze for that long when a first transcript arrived), and loads it
    with others that hold it for about 0.1 s (`fill`); a piece holds it for milliseconds. After
    each piece the loader sleeps `PAUSE_S`: a thread that never waits takes the interpreter back
    every time the window's thread lets it go to call into Qt, and a paint, which does so hundreds
    of times, took 50–180 ms while the list loaded. `OSError` or `ValueError` when there is no list
    for the language."""
    from spellchecker import SpellChecker

    if not language.isalpha():
        raise ValueError(f"no dictionary for {language!r}")
    packed = pkgutil.get_data("spellchecker", f"resources/{language}.json.gz")
    if packed is None:
        raise OSError(f"no dictionary for {language!r}")
    checker = SpellChecker(language=None)
    counts = word_counts(gzip.decompress(packed).decode("utf-8"), pause=PAUSE_S)
    fill(checker.word_frequency, counts, pause=PAUSE_S)
    return checker


def fill(frequency: Any, counts: dict[str, int], piece: int = WORDS_AT_ONCE, pause: float = 0.0) -> None:
    """Load `counts` into an empty pyspellchecker `WordFrequency` as its `load_json` does (words
    lower-cased, the counts of words that differ only in case summed; then its totals: words, unique
    words, letters, longest word), `piece` words at a time. `load_json` ends with calls over the
    whole list (`set().union(*keys)`, `max(map(len, keys))`) that hold the interpreter for about
    0.1 s, which the window, sharing it, showed as a stall when a first transcript arrived. Sleeps
    `pause` s after each slice. The entries are read as they are loaded: a list of them all made
    at once held the interpreter for about 25 ms."""
    words, items = frequency._dictionary, iter(counts.items())
    letters: set[str] = set()
    longest = 0
    while slice_ := list(islice(items, piece)):
        keys = []
        for key, count in slice_:
            lower = key.lower()
            words[lower] += count
            keys.append(lower)
        letters.update(*keys)
        longest = max(longest, *map(len, keys))
        time.sleep(pause)
    frequency._total_words = sum(words.values())
    frequency._unique_words = len(words)
    frequency._letters = letters
    frequency._longest_word_length = longest


def word_counts(text: str, piece: int = PIECE, pause: float = 0.0) -> dict[str, int]:
    """The JSON object `{"word": count, …}` in `text`, parsed about `piece` characters at a time
    (each piece ends before a `, "` that starts the next entry; one found inside a word makes the
    piece longer), sleeping `pause` s after each."""
    body, counts, start = text.strip()[1:-1], {}, 0
    while start < len(body):
        end = _entry_end(body, start + piece)
        while True:
            try:
                counts.update(json.loads("{" + body[start:end] + "}"))
                break
            except ValueError:  # the `, "` was inside a word: the piece goes on to the next one
                if end >= len(body):
                    raise
                end = _entry_end(body, end + 1)
        start = end + 1
        time.sleep(pause)
    return counts


def _entry_end(body: str, at: int) -> int:
    found = _NEXT_ENTRY.search(body, at)
    return found.start() if found else len(body)


def _match_case(suggestion: str, word: str) -> str:
    return suggestion[:1].upper() + suggestion[1:] if word[:1].isupper() else suggestion


@dataclass(slots=True)
class Speller:
    checker: Any  # spellchecker.SpellChecker
    language: str
    own: set[str] = field(default_factory=set)

    @classmethod
    def load(cls, language: str, own_words: Iterable[str] = ()) -> Speller | None:
        try:
            checker = _checker(language.split("-")[0].lower())
        except (ImportError, OSError, ValueError):  # no package, or no dictionary for the language
            return None
        return cls(checker, language, {w.lower() for w in own_words})

    def known(self, word: str) -> bool:
        lower = word.lower().replace("’", "'")
        if (word.isupper() and len(word) > 1) or lower in self.own:
            return True
        return bool(self.checker.known([lower]))

    def misspelled(self, text: str) -> list[tuple[int, int]]:
        return [(m.start(), m.end()) for m in WORD.finditer(text) if not self.known(m.group())]

    def suggestions(self, word: str) -> list[str]:
        found = self.checker.candidates(word.lower()) or set()
        ranked = sorted(found - {word.lower()}, key=lambda w: (-self.checker.word_usage_frequency(w), w))
        return [_match_case(w, word) for w in ranked[:MAX_SUGGESTIONS]]

    def add(self, word: str) -> None:
        self.own.add(word.lower())

    def next_misspelling(self, texts: Sequence[str], row: int, offset: int) -> tuple[int, int, int] | None:
        """(row, start, end) of the first unknown word after `offset` in `row`, or in a later row,
        wrapping to the first row once; None when every word is known."""
        n = len(texts)
        for step in range(n + 1):
            r = (row + step) % n if n else 0
            for start, end in self.misspelled(texts[r]) if n else ():
                if step > 0 or start >= offset:
                    return r, start, end
        return None
