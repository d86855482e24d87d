"""Pure utterance edits: text, split, merge, retime, find and replace."""

from __future__ import annotations

import pytest

from app import edits
from engine.types import Utterance, Word


def timed(text: str, start: float = 0.0, step: float = 0.5, speaker: str | None = "A") -> Utterance:
    words = tuple(Word(start + i * step, start + (i + 1) * step, w) for i, w in enumerate(text.split()))
    return Utterance(start, start + step * len(words), text, speaker, words)


def test_splitting_at_a_word_boundary_uses_the_word_times():
    u = timed("one two three four")
    left, right = edits.split(u, len("one two "))
    assert (left.text, right.text) == ("one two", "three four")
    assert left.end == right.start == 1.0
    assert [w.text for w in right.words] == ["three", "four"]
    assert left.speaker == right.speaker == "A"


def test_splitting_without_word_times_divides_time_by_text_length():
    u = Utterance(10.0, 20.0, "aaaa bbbb", "A")
    left, right = edits.split(u, 5)
    assert 14.0 < left.end == right.start < 15.0


def test_splitting_at_either_edge_is_refused():
    with pytest.raises(ValueError, match="cursor"):
        edits.split(timed("one two"), 0)


def test_merging_joins_text_and_span_and_keeps_the_first_speaker():
    a, b = timed("one two", 0.0), timed("three", 2.0, speaker="B")
    merged = edits.merge(a, b)
    assert (merged.text, merged.start, merged.end, merged.speaker) == ("one two three", 0.0, 2.5, "A")
    assert len(merged.words) == 3


def test_editing_text_keeps_the_times_of_the_words_it_leaves_alone():
    u = timed("one two")
    assert edits.set_text(u, "one  two").words == u.words
    assert edits.set_text(u, "one too").words == (u.words[0], Word(0.5, 1.0, "too"))
    assert edits.set_text(u, "").words == ()


def test_punctuation_insertions_and_deletions_keep_every_unchanged_words_times():
    u = timed("the flights are booked but we still need the hotel.")
    w = u.words
    edited = edits.set_text(u, "The flights are booked, but we really still need a hotel!")
    texts = [x.text for x in edited.words]
    assert texts == edited.text.split() and edits.words_spell_text(edited)
    by_text = {x.text: x for x in edited.words}
    for i, kept in ((0, "The"), (3, "booked,"), (6, "still"), (9, "hotel!")):
        assert (by_text[kept].start, by_text[kept].end) == (w[i].start, w[i].end)
    assert w[5].end <= by_text["really"].start <= by_text["really"].end <= w[6].start
    assert (by_text["a"].start, by_text["a"].end) == (w[8].start, w[8].end)
    assert edits.word_at(edited, edited.text.index("hotel") + 2) == by_text["hotel!"]


def test_retiming_refuses_reversed_or_out_of_range_spans():
    u = timed("one two")
    assert edits.retime(u, 0.2, 0.9, 10.0).start == 0.2
    with pytest.raises(ValueError, match="after"):
        edits.retime(u, 0.9, 0.2, 10.0)
    with pytest.raises(ValueError, match="inside"):
        edits.retime(u, 0.0, 11.0, 10.0)


def test_find_and_replace_all_count_and_respect_case():
    texts = ["The cat sat.", "the CAT ran", "dog"]
    assert [(m.row, m.start) for m in edits.find_matches(texts, "cat")] == [(0, 4), (1, 4)]
    assert len(edits.find_matches(texts, "cat", case_sensitive=True)) == 1
    utterances = [Utterance(i, i + 1, t) for i, t in enumerate(texts)]
    replaced, n = edits.replace_all(utterances, "cat", "fox")
    assert n == 2 and replaced[1].text == "the fox ran" and replaced[2] is utterances[2]


def test_replacement_text_is_literal():
    assert edits.replace_text("a.b", ".", r"\1") == (r"a\1b", 1)


def test_whole_words_skip_matches_inside_longer_words():
    texts = ["The cat sat on the catalogue.", "Cats and a cat."]
    found = edits.find_matches(texts, "cat", whole_words=True)
    assert [(m.row, m.start, m.end) for m in found] == [(0, 4, 7), (1, 11, 14)]


def test_a_regular_expression_finds_and_its_groups_shape_the_replacement():
    texts = ["Call 555-1234 today", "no number"]
    (m,) = edits.find_matches(texts, r"(\d{3})-(\d{4})", regex=True)
    assert texts[m.row][m.start : m.end] == "555-1234"
    swapped = edits.replace_text(texts[0], r"(\d{3})-(\d{4})", r"\2-\1", regex=True)
    assert swapped == ("Call 1234-555 today", 1)
    assert edits.find_matches(texts, "5.5", regex=False) == []  # the dot is literal without regex


def test_a_pattern_that_does_not_compile_or_matches_nothing_says_why():
    with pytest.raises(ValueError, match="not a valid pattern"):
        edits.find_matches(["a"], "(", regex=True)
    with pytest.raises(ValueError, match="empty text"):
        edits.find_matches(["abc"], "x*", regex=True)
    with pytest.raises(ValueError, match="not a valid replacement"):
        edits.replace_text("abc", "(b)", r"\2", regex=True)


def test_a_run_of_one_speaker_merges_into_the_line_merging_two_at_a_time_gives():
    pairs = [(Word(i, i + 0.4, f"word{i}"), Word(i + 0.4, i + 0.8, f" more{i}")) for i in range(4)]
    timed = [Utterance(i, i + 0.8, f"word{i} more{i}", "a", pair) for i, pair in enumerate(pairs)]
    untimed = Utterance(4, 4.5, "  no words here ", "a")
    other = Utterance(5, 6, "Someone else.", "b")
    for lines in (timed, [*timed, untimed], [untimed, *timed]):
        one_by_one = lines[0]
        for u in lines[1:]:
            one_by_one = edits.merge(one_by_one, u)
        assert edits.merge_runs([*lines, other]) == (one_by_one, other)
    merged = edits.merge_runs(timed)[0]
    assert merged.text == "word0 more0 word1 more1 word2 more2 word3 more3" and len(merged.words) == 8
