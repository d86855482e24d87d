"""The speech anchor's rules one by one, at their edges: which segments it believes, how far and how
fast it moves, and when it stops for good. Each test drives the real `GuardedAnchor` with
hand-written segments, so a wrong comparison, a wrong end of a list or a missing clamp shows as a
different anchor."""

from __future__ import annotations

from engine.decode.anchor import END_SLACK, RECENT, TEXT_SLACK, GuardedAnchor
from engine.decode.api import SegmentTimes
from engine.decode.voiced import Voiced

S = 200  # speech tokens of the chunk


def seg(start, end=None, words=0):
    return SegmentTimes(start, end, words)


def test_a_segment_is_believed_only_inside_the_chunk_and_with_its_end_in_order():
    anchor = GuardedAnchor(S)
    believed = [
        anchor.plausible(s)
        for s in (
            seg(0),
            seg(S - 1),
            seg(S),
            seg(-1),
            seg(None, 5),
            seg(10, 10),
            seg(10, 9),
            seg(10, S + END_SLACK),
            seg(10, S + END_SLACK + 1),
        )
    ]
    assert believed == [True, True, False, False, False, True, False, True, False]


def test_the_anchor_waits_for_three_starts_then_takes_the_smallest_of_the_last_three():
    anchor = GuardedAnchor(S)
    assert anchor.read([seg(40), seg(30)], written=1000) == -1  # two Starts: nothing yet
    assert anchor.read([seg(50)], written=1000) == 30  # min(40, 30, 50)
    assert anchor.read([seg(60), seg(70)], written=2000) == 50  # the 40 and the 30 fell out
    assert anchor.read([seg(20)], written=3000) == 50  # it never moves back
    assert RECENT == 3


def test_a_fractional_start_anchors_at_the_token_it_falls_in():
    anchor = GuardedAnchor(S)
    assert anchor.read([seg(30.9), seg(40.5), seg(50.2)], written=1000) == 30


def test_implausible_segments_still_count_their_words_but_not_their_starts():
    anchor = GuardedAnchor(S, per_word=10.0)
    anchor.read([seg(S + 5, words=4), seg(None, words=3)], written=10)
    assert anchor.words == 7 and len(anchor.recent) == 0 and anchor.value == -1


def test_the_anchor_moves_at_most_four_speech_tokens_per_output_token_since_it_last_moved():
    anchor = GuardedAnchor(S)
    assert anchor.read([seg(100), seg(110), seg(120)], written=5) == 20  # 0 + 4 × 5
    assert anchor.read([seg(130)], written=8) == 32  # 20 + 4 × (8 − 5)
    assert anchor.read([seg(140)], written=8) == 32  # no token written since it moved: it stays
    assert anchor.moved_at == 8


def test_the_anchor_moves_no_further_than_the_new_words_cover():
    anchor = GuardedAnchor(S, per_word=2.0)
    assert anchor.read([seg(10, words=5), seg(20, words=5), seg(30, words=5)], written=1000) == 10
    assert anchor.words_at == 15
    assert anchor.read([seg(40, words=2)], written=2000) == 14  # 10 + 2 × 2 new words
    assert anchor.read([seg(50, words=0)], written=3000) == 14  # a repeat adds no words: it stays


def test_without_the_text_check_the_words_limit_nothing():
    anchor = GuardedAnchor(S)
    assert not anchor.checks_text and anchor.text_reach() == S
    assert anchor.read([seg(100), seg(110), seg(120)], written=1000) == 100


def test_the_words_written_bound_the_anchor_through_the_voiced_speech():
    voiced = Voiced(S, [(0, 50), (150, 200)])  # 100 unvoiced tokens in between
    anchor = GuardedAnchor(S, voiced, per_word=10.0)
    anchor.words = 5  # 50 voiced tokens: the whole first stretch and the silence after it
    assert anchor.checks_text and anchor.text_reach() == 150


def test_a_start_more_than_the_slack_past_what_the_words_reach_stops_the_anchor_for_good():
    at_edge = GuardedAnchor(S, per_word=1.0)
    at_edge.words = 10  # the words reach index 10
    at_edge.read([seg(10 + TEXT_SLACK)], written=10)
    assert not at_edge.stopped  # exactly the slack past: believed
    past = GuardedAnchor(S, per_word=1.0)
    past.words = 10
    past.read([seg(11 + TEXT_SLACK, words=50)], written=10)
    assert past.stopped
    assert past.read([seg(40, words=50), seg(50, words=50)], written=1000) == -1  # it never moves again


def test_the_words_a_segment_adds_count_only_after_its_start_is_checked():
    anchor = GuardedAnchor(S, per_word=1.0)
    anchor.read([seg(5 + TEXT_SLACK + 1, words=100)], written=10)  # its own words do not excuse it
    assert anchor.stopped


def test_an_anchor_that_did_not_move_keeps_its_budget_from_when_it_last_moved():
    anchor = GuardedAnchor(S)
    assert anchor.read([seg(100), seg(110), seg(120)], written=5) == 20
    assert anchor.read([seg(20)], written=8) == 20  # min Start 20: where it already is
    assert anchor.read([seg(130), seg(140), seg(150)], written=10) == 40  # 20 + 4 × (10 − 5)


def test_the_first_move_is_bounded_by_every_word_written():
    anchor = GuardedAnchor(S, per_word=5.0)
    assert anchor.read([seg(20, words=1), seg(22, words=1), seg(23, words=1)], written=1000) == 15
