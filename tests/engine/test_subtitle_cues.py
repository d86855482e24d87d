"""Subtitle cues at their limits: what a viewer sees when a line, a cue or a duration is exactly
full, where a long text is cut, and when a cue shows when the words carry no times."""

from __future__ import annotations

import pytest

from engine.export.cues import CueLayout, split_utterance
from engine.types import Utterance, Word


def timed(text: str, start: float = 0.0, seconds_per_word: float = 0.5) -> Utterance:
    """An utterance whose words follow each other every `seconds_per_word`."""
    step = seconds_per_word
    words = tuple(Word(start + k * step, start + (k + 1) * step, w) for k, w in enumerate(text.split()))
    return Utterance(start, words[-1].end, text, words=words)


@pytest.mark.parametrize(
    ("fields", "message"),
    [({"max_chars": 7}, "at least 8 characters, got 7"), ({"max_lines": 0}, "at least one line, got 0"),
     ({"max_seconds": 0.0}, "must be positive, got 0.0")],
)  # fmt: skip
def test_a_layout_below_its_limit_is_refused_by_name(fields, message):
    with pytest.raises(ValueError, match=message):
        CueLayout(**fields)


def test_the_smallest_layouts_allowed_are_used_as_given():
    layout = CueLayout(max_chars=8, max_lines=1, max_seconds=0.5)
    cues = split_utterance(timed("abcdefgh ijklmnop", seconds_per_word=0.5), layout)
    assert [c.lines for c in cues] == [("abcdefgh",), ("ijklmnop",)]


def test_two_lines_filled_to_the_last_character_make_one_balanced_cue():
    cues = split_utterance(timed("aaaa bbbb cccc ddddd"), CueLayout(max_chars=10, max_lines=2))
    assert [c.lines for c in cues] == [("aaaa bbbb", "cccc ddddd")]


def test_two_lines_are_balanced_and_three_are_filled_in_reading_order():
    two = split_utterance(timed("one two three four five six"), CueLayout(max_chars=20, max_lines=2))
    assert [c.lines for c in two] == [("one two three", "four five six")]  # not 18 + 8 characters
    three = split_utterance(timed("one two three four five"), CueLayout(max_chars=10, max_lines=3))
    assert [c.lines for c in three] == [("one two", "three four", "five")]


def test_a_cue_lasting_exactly_the_limit_is_not_cut():
    cues = split_utterance(timed("a b c d e f g", seconds_per_word=1.0), CueLayout(max_seconds=7.0))
    assert len(cues) == 1 and (cues[0].start, cues[0].end) == (0.0, 7.0)
    cut = split_utterance(timed("a b c d e f g h", seconds_per_word=1.0), CueLayout(max_seconds=7.0))
    assert len(cut) == 2


def test_a_long_text_is_cut_after_a_sentence_then_after_a_clause_rather_than_mid_phrase():
    layout = CueLayout(max_chars=24, max_lines=1)
    sentence = split_utterance(timed("We met at noon. Then we went home early"), layout)
    assert [c.lines[0] for c in sentence] == ["We met at noon.", "Then we went home early"]
    clause = split_utterance(timed("We met at noon, then we went home early"), layout)
    assert [c.lines[0] for c in clause] == ["We met at noon,", "then we went home early"]
    plain = split_utterance(timed("We met at noon and then went home early"), layout)
    assert [c.lines[0] for c in plain] == ["We met at noon and", "then went home early"]  # even halves


def test_a_speaker_prefix_with_a_full_width_word_still_shows_both():
    cues = split_utterance(timed("abcdefghij"), CueLayout(max_chars=10, max_lines=1), prefix="Alice:")
    assert [c.lines for c in cues] == [("Alice:", "abcdefghij")]


def test_without_word_times_cues_start_in_proportion_to_where_their_text_starts():
    text = " aaaaaaa bbbbbbb ccccccc"  # the text starts after a space: offsets count from the first word
    cues = split_utterance(Utterance(10.0, 16.0, text), CueLayout(max_chars=8, max_lines=1))
    assert [c.lines for c in cues] == [("aaaaaaa",), ("bbbbbbb",), ("ccccccc",)]
    scale = 6.0 / 23  # 6 s over the 23 characters from the first word's start to the last one's end
    assert [c.start for c in cues] == pytest.approx([10.0, 10.0 + 8 * scale, 10.0 + 16 * scale])
    assert [c.end for c in cues] == pytest.approx([10.0 + 8 * scale, 10.0 + 16 * scale, 16.0])
