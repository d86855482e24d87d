"""A line's hash leaves its words out, its equality does not: sets of a long transcript's lines
(the run's end, the edits kept) cost one hash per line, not one per word."""

from __future__ import annotations

import pytest

from engine.types import Utterance, Word


def line(text: str, words: tuple[str, ...]) -> Utterance:
    timed = tuple(Word(1.0 + i / 10, 1.05 + i / 10, w) for i, w in enumerate(words))
    return Utterance(1.0, 2.0, text, "S1", timed)


def test_a_set_of_lines_hashes_none_of_their_words(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the words hashed with the line (2,001 lines: 131,000 hash calls at a run's end)
    hashed = 0
    plain = Word.__hash__

    def counted(word: Word) -> int:
        nonlocal hashed
        hashed += 1
        return plain(word)

    monkeypatch.setattr(Word, "__hash__", counted)
    lines = {line(f"line {k}", ("some", "words", "here")) for k in range(50)}
    assert len(lines) == 50 and hashed == 0


def test_lines_that_differ_only_in_their_words_are_still_different_lines() -> None:
    # catches: the words left out of equality too (a line whose word times changed taken for the
    # engine's own and replaced by the next run)
    a, b = line("same", ("same",)), line("same", ("SAME",))
    assert a != b and len({a, b}) == 2 and hash(a) == hash(b)
    assert line("same", ("same",)) == a and line("same", ("same",)) in {a}
