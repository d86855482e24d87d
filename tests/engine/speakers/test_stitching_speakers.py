"""Stitching with speakers: text repeated across a chunk boundary is said once, ids are stable."""

from __future__ import annotations

from engine.stitching import StitchConfig, stitch
from engine.types import Chunk, ChunkResult, Segment, Utterance, Word


def result(index: int, start: float, end: float, *segments: Segment) -> ChunkResult:
    return ChunkResult(chunk=Chunk(index, start, end), segments=segments)


def test_a_segment_repeated_at_the_head_of_the_next_chunk_is_dropped():
    first = result(
        0, 0.0, 30.0, Segment(20.0, 24.0, "We should ship it.", 0), Segment(25.0, 29.8, "Next week then.", 1)
    )
    second = result(1, 30.5, 60.0, Segment(0.0, 0.6, "next week then", 0), Segment(1.0, 4.0, "Agreed.", 1))
    texts = [u.text for u in stitch([first, second], {(0, 0): "a", (0, 1): "b", (1, 0): "b", (1, 1): "a"})]
    assert texts == ["We should ship it.", "Next week then.", "Agreed."]


def test_a_head_that_starts_with_the_previous_tail_loses_only_the_repeated_words():
    words = tuple(
        Word(0.1 + 0.3 * i, 0.35 + 0.3 * i, w)
        for i, w in enumerate(["the", "end", "of", "it", "and", "more"])
    )
    first = result(0, 0.0, 30.0, Segment(26.0, 29.9, "right to the end of it", 0))
    second = result(1, 30.0, 60.0, Segment(0.1, 1.9, "the end of it and more", 0, words=words))
    *_, last = stitch([first, second], {(0, 0): "a", (1, 0): "b"})
    assert last.text == "and more" and [w.text for w in last.words] == ["and", "more"]
    assert last.start == words[4].start + 30.0


def test_a_short_reply_said_again_after_the_boundary_is_kept():
    first = result(0, 0.0, 30.0, Segment(27.0, 29.5, "Yes, I agree.", 0))
    second = result(1, 30.5, 60.0, Segment(0.2, 0.6, "Yes.", 0), Segment(1.0, 3.0, "Let us start.", 1))
    texts = [u.text for u in stitch([first, second], {(0, 0): "a", (1, 0): "b", (1, 1): "a"})]
    assert texts == ["Yes, I agree.", "Yes.", "Let us start."]


def test_text_far_from_the_boundary_is_never_treated_as_a_repeat():
    first = result(0, 0.0, 30.0, Segment(1.0, 3.0, "thank you", 0))
    second = result(1, 30.0, 60.0, Segment(20.0, 21.0, "thank you", 0))
    assert len(stitch([first, second], {(0, 0): "a", (1, 0): "a"})) == 2


def test_speaker_ids_become_s1_s2_in_order_of_first_appearance():
    chunk = result(0, 0.0, 60.0, Segment(0, 2, "hi", 0), Segment(3, 5, "hello", 1), Segment(9, 10, "bye", 0))
    utterances = stitch([chunk], {(0, 0): "G7", (0, 1): "G2"})
    assert [u.speaker for u in utterances] == ["S1", "S2", "S1"]


def test_a_relabel_step_runs_before_same_speaker_merging():
    chunk = result(0, 0.0, 60.0, Segment(0, 2, "one"), Segment(2.5, 4, "two"))

    def everyone_is_ann(utterances: list[Utterance]) -> list[Utterance]:
        return [Utterance(u.start, u.end, u.text, "ann") for u in utterances]

    (merged,) = stitch([chunk], None, StitchConfig(merge_gap=1.5), relabel=everyone_is_ann)
    assert (merged.text, merged.speaker) == ("one two", "S1")
