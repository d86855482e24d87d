"""The speech anchor's rules one by one, at their edges: which segments it believes, how far and how
fast it moves, when it stops for good, what the harm meter counts, and how the VibeVoice reader
turns reply text into segment times and words. Each test drives the real reader with hand-written
segments or reply text, so a wrong comparison, a wrong end of a list or a missing clamp shows as a
different anchor, loss or time."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np

from engine.backends.vibevoice.anchor import (
    REPEATS,
    TimestampTracker,
    TokenText,
    speech_anchor,
    speech_token_rate,
    voiced_spans,
)
from engine.decode.anchor import END_SLACK, RECENT, TEXT_SLACK, GuardedAnchor, Harm, RowReader, RowReaders
from engine.decode.api import SegmentTimes
from engine.decode.voiced import Voiced
from engine.types import Chunk, SpeechSegment

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


def test_harm_is_the_share_of_the_speech_lost_and_nothing_without_speech():
    assert Harm(5, 20).fraction == 0.25
    assert Harm(0, 0).fraction == 0.0


class Scripted:
    """A tracker that closes the given segment when it reads output index k (by `feed` order)."""

    tokens_per_second = 7.5

    def __init__(self, closing: dict[int, SegmentTimes], still_open: SegmentTimes | None = None):
        self.closing, self.still_open, self.read = closing, still_open, 0

    def feed(self, token_ids):
        out = [self.closing[self.read]] if self.read in self.closing else []
        self.read += len(token_ids)
        return out

    def open(self):
        return self.still_open


def keeps_from(lo):
    """Every step keeps speech [lo, S) and no sinks."""
    return lambda step, anchor: [(0, lo, S)]


def test_the_anchor_before_output_k_is_the_one_read_after_output_k_minus_one():
    closing = {0: seg(40), 1: seg(50), 2: seg(60), 3: seg(70)}
    reader = RowReader(Scripted(closing), S, None)
    for k in range(4):
        reader.feed(0, k - 1)
    assert reader.anchors == [-1, -1, 12, 16]  # the third Start moves it, 4 tokens per output
    assert [reader.anchor_before(k) for k in range(6)] == [-1, -1, -1, 12, 16, -1]


def test_a_resumed_row_reads_its_output_again_as_if_decoded_here():
    closing = {0: seg(40), 1: seg(50), 2: seg(60)}
    primed = RowReader(Scripted(closing), S, None)
    primed.prime([7, 8, 9])
    fed = RowReader(Scripted(closing), S, None)
    for k, token in enumerate([7, 8, 9]):
        fed.feed(token, k - 1)
    assert primed.anchors == fed.anchors == [-1, -1, 12]


def test_speech_inside_a_completed_segment_that_its_step_no_longer_held_is_lost():
    reader = RowReader(Scripted({0: seg(10, 20)}), S, keeps_from(15))
    reader.feed(0, -1)
    assert np.flatnonzero(reader.lost).tolist() == list(range(10, 15))
    assert reader.harm == Harm(5, S)


def test_a_segment_spans_from_its_earliest_to_its_latest_time_within_the_chunk():
    for written, lost in (
        (seg(20, 10), range(10, 15)),  # inverted: the same span
        (seg(12), [12]),  # no End: its Start's token
        (seg(-5, 12.5), range(0, 13)),  # clipped at the chunk's start, the End's token included
        (seg(None, None), []),
        (seg(S + 3, S + 9), []),  # past the chunk: nothing
    ):
        reader = RowReader(Scripted({0: written}), S, keeps_from(15))
        reader.feed(0, -1)
        assert np.flatnonzero(reader.lost).tolist() == list(lost), written


def test_speech_evicted_past_where_the_words_reached_counts_even_when_no_time_says_so():
    closing = {0: seg(None, words=10), 1: seg(None, words=10)}  # 20 words over 200 tokens: 10 each
    reader = RowReader(Scripted(closing), S, keeps_from(50))  # tokens 0..49 gone from the start
    reader.feed(0, -1)  # seen gone with 0 words written
    reader.feed(0, 0)
    assert reader.gone_words[:50].tolist() == [0] * 50 and reader.gone_words[50] == -1
    assert reader.unconfirmed().sum() == 50  # no word had reached any of it
    assert reader.harm.lost_tokens == 50


def test_speech_gone_after_words_covered_it_is_not_counted():
    closing = {0: seg(None, words=10), 1: seg(None, words=10)}
    reader = RowReader(Scripted(closing), S, None)
    reader.kept_at = keeps_from(0)
    reader.feed(0, -1)  # 10 words written: nothing gone yet
    reader.kept_at = keeps_from(60)
    reader.feed(0, 0)  # 0..59 first seen gone with 10 words written: 100 tokens at 10 per word
    assert reader.unconfirmed().sum() == 0


def test_a_row_that_never_evicted_has_no_unconfirmed_speech():
    reader = RowReader(Scripted({0: seg(10, words=3)}), S, keeps_from(0))
    reader.feed(0, -1)
    assert not reader.unconfirmed().any() and reader.harm.lost_tokens == 0


def test_the_open_segment_counts_against_the_last_step_when_the_row_ends():
    steps: list[int] = []

    def kept_at(step, anchor):
        steps.append(step)
        return [(0, 30, S)]

    reader = RowReader(Scripted({}, still_open=seg(20, 40)), S, kept_at)
    for k in range(3):
        reader.feed(0, k - 1)
    reader.close()
    assert steps == [1]  # the step that chose the last token
    assert np.flatnonzero(reader.lost).tolist() == list(range(20, 30))


def test_closing_a_row_without_an_open_segment_or_a_meter_changes_nothing():
    class Plain:
        tokens_per_second = 7.5

        def feed(self, token_ids):
            return []

    reader = RowReader(Plain(), S, keeps_from(30))
    reader.close()
    assert not reader.lost.any() and reader.gone_words[:30].tolist() == [0] * 30
    unmetered = RowReader(Scripted({}, still_open=seg(20, 40)), S, None)
    unmetered.close()
    assert not unmetered.lost.any()


def test_the_readers_follow_their_rows_as_rows_leave_and_move():
    made: list[Scripted] = []

    def make():
        made.append(Scripted({0: seg(5, words=5), 1: seg(6, words=5), 2: seg(7, words=5)}))
        return made[-1]

    readers = RowReaders(3, make, word_rate=2.5)
    first = readers.reader(S, keeps_from(0), [1, 2, 3], voiced=[(0, 100)])
    assert first.anchor.per_word == 7.5 / 2.5 and first.voiced.total == 100
    assert first.anchors == [-1, -1, 5]  # it read its output so far
    assert math.isinf(RowReaders(1, make).reader(S, keeps_from(0), []).anchor.per_word)
    second = readers.reader(S, keeps_from(0), [])
    readers.rows[0], readers.rows[2] = first, second
    out = np.full(3, 99, dtype=np.int64)
    readers.anchors(np.array([3, 0, 0]), out)
    assert out.tolist() == [5, 99, -1]  # row 1 holds no reader: left as it was
    readers.feed(np.array([0, 0, 4]), np.array([2]), np.array([0, 0, 0]))
    assert second.anchors == [-1] and first.anchors == [-1, -1, 5]
    assert readers.lost(0) == 0 and readers.lost(1) is None and not readers.stopped(1)
    readers.release(0, 2)  # row 0 left; row 2 moved into it
    assert readers.rows == [second, None, None]
    readers.release(0, None)
    assert readers.rows == [None, None, None]


def test_a_closed_row_measures_its_open_segment_through_the_batch():
    readers = RowReaders(2, lambda: Scripted({}, still_open=seg(20, 40)))
    readers.rows[1] = readers.reader(S, keeps_from(30), [0, 0])
    readers.close(1)
    readers.close(0)  # no reader: nothing happens
    assert readers.lost(1) == 10


def test_the_speech_token_rate_is_the_sample_rate_over_the_hop():
    config = SimpleNamespace(acoustic_tokenizer_encoder_config=SimpleNamespace(hop_length="3200"))
    assert speech_token_rate(config) == 7.5
    assert speech_token_rate(config, sample_rate=16000) == 5.0


class CharTokenizer:
    """Token id i is the character chr(i); decoding is counted."""

    def __init__(self):
        self.calls = 0

    def decode(self, ids, skip_special_tokens, clean_up_tokenization_spaces):
        self.calls += 1
        return "".join(chr(i) for i in ids)


def ids(text: str) -> list[int]:
    return [ord(c) for c in text]


def test_each_tokens_text_is_decoded_once_and_shared_by_every_row():
    tokenizer = CharTokenizer()
    make = speech_anchor(tokenizer, 7.5)
    one, two = make(), make()
    assert one.text is two.text and one.tokens_per_second == 7.5
    one.feed(ids("aab"))
    two.feed(ids("ba"))
    assert tokenizer.calls == 2 and TokenText(tokenizer)(ord("z")) == "z"


def test_the_reader_reports_times_in_speech_tokens_and_keeps_the_text_after_the_last_object():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 7.5)
    reply = '[{"Start": 2, "End": "4.0", "Content": "Hello there"}, {"Start_time": 6'
    assert tracker.feed(ids(reply[:20])) == []
    found = tracker.feed(ids(reply[20:]))
    assert found == [SegmentTimes(15.0, 30.0, 2)]
    assert tracker.pending == ', {"Start_time": 6'
    assert tracker.feed(ids(', "end time": 8, "Text": "again"}')) == [SegmentTimes(45.0, 60.0, 1)]
    assert tracker.pending == ""


def test_a_text_one_of_the_recent_segments_had_adds_no_words():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 1.0)
    texts = ["Yes, right.", "yes right", "no", "", "YES  right!"]
    found = [tracker.feed(ids(json_segment(t)))[0].words for t in texts]
    assert found == [2, 0, 1, 0, 0]


def json_segment(text: str, start: float = 1.0) -> str:
    return json.dumps({"Start": start, "End": start + 1, "Content": text})


def test_content_is_read_before_text_and_a_missing_time_is_none():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 1.0)
    both = '{"Start": "x", "Content": "one two", "Text": "three"}'
    assert tracker.feed(ids(both)) == [SegmentTimes(None, None, 2)]
    number = '{"StartTime": 3, "Content": 5, "Text": "four five six"}'
    assert tracker.feed(ids(number)) == [SegmentTimes(3.0, None, 3)]


def test_the_segment_being_written_is_read_when_the_row_ends():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 2.0)
    tracker.feed(ids('[{"Start": 1, "End": 2, "Content": "a"}, {"Start": 3, "End": 5, "Content": "b c'))
    assert tracker.open() == SegmentTimes(6.0, 10.0)
    closed = TimestampTracker(TokenText(CharTokenizer()), 2.0)
    closed.feed(ids('{"Start": 1, "End": 2, "Content": "a"}'))
    assert closed.open() is None
    bare = TimestampTracker(TokenText(CharTokenizer()), 2.0)
    bare.feed(ids('{"Start": 3'))
    assert bare.open() is None  # no words yet: the transcript keeps nothing of it


def chunk(start: float, end: float, speech: list[tuple[float, float]]) -> Chunk:
    return Chunk(index=0, start=start, end=end, speech=tuple(SpeechSegment(a, b) for a, b in speech))


def test_vad_speech_maps_to_the_tokens_it_touches_clipped_to_the_chunk():
    speech = [(15.05, 16.0), (9.0, 11.0), (19.5, 25.0), (12.0, 12.0)]
    spans = voiced_spans(chunk(10.0, 20.0, speech), (4, 104))
    assert spans == ((0, 10), (50, 60), (95, 100))
    assert voiced_spans(chunk(10.0, 10.0, [(10.0, 11.0)]), (0, 0)) == ()


def test_an_anchor_that_did_not_move_keeps_its_budget_from_when_it_last_moved():
    anchor = GuardedAnchor(S)
    assert anchor.read([seg(100), seg(110), seg(120)], written=5) == 20
    assert anchor.read([seg(20)], written=8) == 20  # min Start 20: where it already is
    assert anchor.read([seg(130), seg(140), seg(150)], written=10) == 40  # 20 + 4 × (10 − 5)


def test_the_first_move_is_bounded_by_every_word_written():
    anchor = GuardedAnchor(S, per_word=5.0)
    assert anchor.read([seg(20, words=1), seg(22, words=1), seg(23, words=1)], written=1000) == 15


def test_an_anchor_read_on_the_first_output_is_used_by_the_step_feeding_the_second():
    class Burst(Scripted):
        def feed(self, token_ids):
            self.read += 1
            return [seg(40), seg(50), seg(60)] if self.read == 1 else []

    reader = RowReader(Burst({}), S, None)
    reader.feed(0, -1)
    assert reader.anchors == [4] and reader.anchor_before(1) == 4 and reader.anchor_before(0) == -1


class Recording(Scripted):
    """`Scripted`, also keeping the tokens it read."""

    def __init__(self, closing):
        super().__init__(closing)
        self.tokens: list[int] = []

    def feed(self, token_ids):
        self.tokens += list(token_ids)
        return super().feed(token_ids)


def test_a_resumed_row_measures_each_output_against_the_step_that_chose_it():
    asked: list[tuple[int, int]] = []

    def kept_at(step, anchor):
        asked.append((step, anchor))
        return [(0, 0, S)]

    tracker = Recording({k: seg(40 + 10 * k) for k in range(5)})
    reader = RowReader(tracker, S, kept_at)
    reader.prime([7, 8, 9, 10, 11])
    assert tracker.tokens == [7, 8, 9, 10, 11]
    assert asked == [(-1, -1), (0, -1), (1, -1), (2, -1), (3, 12)]  # output k: step k − 1, its anchor


def test_the_batch_feeds_each_row_its_token_as_output_index_of_the_step_before():
    asked: list[int] = []
    tracker = Recording({0: seg(10)})
    readers = RowReaders(2, lambda: tracker)
    readers.rows[1] = readers.reader(S, lambda step, anchor: asked.append(step) or [], [])
    readers.feed(np.array([5, 6]), np.array([1]), np.array([0, 3]))
    assert tracker.tokens == [6] and asked == [2]


def test_speech_gone_in_any_group_counts_and_a_window_end_is_exclusive():
    groups = [(0, 10, S), (0, 0, 30)]  # one group evicted 0..9, the other everything from 30 on
    reader = RowReader(Scripted({0: seg(5, 35)}), S, lambda step, anchor: groups)
    reader.feed(0, -1)
    assert np.flatnonzero(reader.lost).tolist() == [*range(5, 10), *range(30, 35)]


def test_speech_once_lost_stays_lost_when_a_later_segment_covers_it_again():
    kept = [(0, 15, S)]
    reader = RowReader(Scripted({0: seg(10, 20), 1: seg(10, 20)}), S, lambda step, anchor: kept)
    reader.feed(0, -1)
    kept[0] = (0, 0, S)  # a later step holds everything (e.g. a resumed row)
    reader.feed(0, 0)
    assert np.flatnonzero(reader.lost).tolist() == list(range(10, 15))


def test_speech_gone_beyond_where_the_words_reached_counts_at_the_rows_own_pace():
    closing = {0: seg(None, words=10), 1: seg(None, words=10)}  # 20 words over 200 tokens: 10 each
    reader = RowReader(Scripted(closing), S, None)
    reader.kept_at = keeps_from(0)
    reader.feed(0, -1)
    reader.kept_at = keeps_from(150)
    reader.feed(0, 0)  # 0..149 first seen gone with 10 words written, which reach token 100
    assert np.flatnonzero(reader.unconfirmed()).tolist() == list(range(100, 150))


def test_the_readers_text_check_uses_the_chunks_vad_speech_at_any_word_rate():
    readers = RowReaders(1, lambda: Scripted({}), word_rate=0.5)
    reader = readers.reader(S, keeps_from(0), [], voiced=[(0, 20), (120, 200)])
    assert reader.anchor.per_word == 15.0
    reader.anchor.words = 2  # 30 voiced tokens: the first 20, the silence, then 10 more
    assert reader.anchor.text_reach() == 130


def test_the_batch_reports_a_row_whose_anchor_stopped():
    readers = RowReaders(1, lambda: Scripted({0: seg(150)}), word_rate=2.5)
    readers.rows[0] = readers.reader(S, keeps_from(0), [])
    readers.feed(np.array([0]), np.array([0]), np.array([1]))  # a Start 150 with no words before it
    assert readers.stopped(0)


def test_a_segment_without_text_adds_no_words():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 1.0)
    assert tracker.feed(ids('{"Start": 1, "End": 2, "Speaker": 0}')) == [SegmentTimes(1.0, 2.0, 0)]


def test_a_text_written_long_ago_counts_again():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 1.0)
    texts = [f"segment {i}" for i in range(REPEATS)]
    for text in texts:
        tracker.feed(ids(json_segment(text)))
    assert tracker.feed(ids(json_segment(texts[0])))[0].words == 0  # within the last REPEATS
    tracker.feed(ids(json_segment("one more")))
    assert tracker.feed(ids(json_segment(texts[1])))[0].words == 0
    tracker.feed(ids(json_segment("and more")))
    assert tracker.feed(ids(json_segment(texts[0])))[0].words == 2  # pushed out: new again


def test_a_segment_is_reported_on_the_token_that_closes_it():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 1.0)
    reply = json_segment("a b")
    found = [tracker.feed([token]) for token in ids(reply)]
    assert [i for i, f in enumerate(found) if f] == [len(reply) - 1]


def test_a_short_chunks_vad_speech_still_maps_and_a_chunk_without_duration_has_none():
    assert voiced_spans(chunk(10.0, 10.5, [(10.0, 10.25)]), (0, 4)) == ((0, 2),)
    assert voiced_spans(chunk(10.0, 10.0, [(10.0, 11.0)]), (0, 50)) == ()
