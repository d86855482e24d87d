"""Stitching makes chunk-relative output absolute, repairs bad times and merges same-speaker turns."""

from __future__ import annotations

import pytest

from engine.stitching import StitchConfig, stitch
from engine.types import Chunk, ChunkResult, Segment, Word


def result(index: int, start: float, end: float, *segments: Segment) -> ChunkResult:
    return ChunkResult(chunk=Chunk(index, start, end), segments=segments)


def test_times_become_absolute_and_results_are_ordered_whatever_order_they_finished_in():
    late = result(1, 100.0, 130.0, Segment(2.0, 4.0, "second"))
    early = result(0, 10.0, 40.0, Segment(1.0, 3.0, "first", words=(Word(1.0, 1.5, "first"),)))
    utterances = stitch([late, early])
    assert [(u.start, u.end, u.text) for u in utterances] == [(11.0, 13.0, "first"), (102.0, 104.0, "second")]
    assert utterances[0].words == (Word(11.0, 11.5, "first"),)


def test_out_of_range_times_are_clamped_into_the_chunk():
    (u,) = stitch([result(0, 50.0, 80.0, Segment(-3.0, 45.0, "too wide"))])
    assert (u.start, u.end) == (50.0, 80.0)


def test_inverted_times_are_repaired_from_words_or_neighbours():
    words = (Word(5.0, 5.4, "hello"), Word(5.5, 6.0, "there"))
    chunk = result(
        0,
        0.0,
        30.0,
        Segment(9.0, 2.0, "hello there", words=words),  # inverted, words know better
        Segment(12.0, 11.0, "no words here"),  # inverted, the next segment bounds it
        Segment(15.0, 20.0, "next"),
    )
    first, second, third = stitch([chunk])
    assert (first.start, first.end) == (5.0, 6.0)
    assert (second.start, second.end) == (12.0, 15.0)
    assert third.start == 15.0


def test_empty_segments_are_dropped():
    assert stitch([result(0, 0, 10, Segment(1, 2, "  "), Segment(3, 4, "kept"))])[0].text == "kept"


def test_same_speaker_neighbours_merge_only_across_short_gaps():
    chunk = result(
        0,
        0.0,
        60.0,
        Segment(0, 2, "a", speaker=0),
        Segment(3, 5, "b", speaker=0),  # gap 1 s: merge
        Segment(9, 10, "c", speaker=0),  # gap 4 s: keep apart
        Segment(10.5, 12, "d", speaker=1),
    )
    utterances = stitch([chunk], {(0, 0): "S1", (0, 1): "S2"}, StitchConfig(merge_gap=1.5))
    assert [(u.text, u.speaker) for u in utterances] == [("a b", "S1"), ("c", "S1"), ("d", "S2")]


def test_unknown_speakers_are_never_merged():
    chunk = result(0, 0.0, 60.0, Segment(0, 2, "a"), Segment(2.1, 4, "b"))
    assert len(stitch([chunk])) == 2


def test_negative_merge_gap_is_rejected():
    with pytest.raises(ValueError):
        StitchConfig(merge_gap=-1)


def test_dropping_inversions_removes_segments_written_end_before_start_as_the_paper_filtered():
    chunk = result(
        0, 0.0, 30.0,
        Segment(9.0, 2.0, "inverted"),
        Segment(12.0, 15.0, "kept", flags=()),
        Segment(16.0, 16.5, "repaired by parsing", flags=("inverted",)),
    )  # fmt: skip
    assert [u.text for u in stitch([chunk], config=StitchConfig(inversions="drop"))] == ["kept"]
    assert len(stitch([chunk])) == 3  # repaired by default
    with pytest.raises(ValueError, match="inversions"):
        StitchConfig(inversions="ignore")


def test_merging_two_lines_of_one_speaker_keeps_both_lines_word_timings():
    first_words = (Word(1.0, 1.4, "We"), Word(1.5, 2.0, "agreed."))
    second_words = (Word(2.6, 3.0, "Ship"), Word(3.1, 3.6, "it."))
    chunk = result(0, 0.0, 10.0, Segment(1.0, 2.0, "We agreed.", 0, first_words),
                   Segment(2.6, 3.6, "Ship it.", 0, second_words))  # fmt: skip
    (merged,) = stitch([chunk], {(0, 0): "S1"}, StitchConfig(merge_gap=1.5))
    assert merged.text == "We agreed. Ship it."
    assert [(w.start, w.end, w.text) for w in merged.words] == [
        (1.0, 1.4, "We"), (1.5, 2.0, "agreed."), (2.6, 3.0, "Ship"), (3.1, 3.6, "it.")
    ]  # fmt: skip
    assert (merged.start, merged.end) == (1.0, 3.6)


def test_a_word_near_the_chunk_start_keeps_its_own_time():
    chunk = result(0, 100.0, 130.0, Segment(0.2, 1.0, "hi", words=(Word(0.2, 0.5, "hi"),)))
    (u,) = stitch([chunk])
    assert (u.words[0].start, u.words[0].end) == (100.2, 100.5)


def test_a_zero_length_segment_is_not_inverted_and_is_kept_when_dropping_inversions():
    chunk = result(0, 0.0, 10.0, Segment(2.0, 2.0, "instant"), Segment(5.0, 4.0, "inverted"))
    assert [u.text for u in stitch([chunk], config=StitchConfig(inversions="drop"))] == ["instant"]


def test_a_repeated_head_whose_words_do_not_line_up_loses_its_text_only():
    first = result(0, 0.0, 30.0, Segment(26.0, 29.9, "right to the end of it", 0))
    second = result(1, 30.0, 60.0, Segment(0.1, 1.9, "— the end of it and more", 0))
    *_, last = stitch([first, second])
    assert last.text == "and more" and last.start == 30.1
