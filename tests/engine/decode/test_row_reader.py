"""A row's transcript reader and the batch's readers, one rule at a time: which anchor each step
uses, what the harm meter counts as speech lost (inside a segment as written, or past where the
words had reached), and how readers follow rows that leave and move. Each test drives the real
`RowReader` / `RowReaders` with a scripted tracker, so a step off by one, a dropped group or an
overwritten loss shows as a different anchor or loss."""

from __future__ import annotations

import math

import numpy as np

from engine.decode.anchor import Harm, RowReader, RowReaders
from engine.decode.api import SegmentTimes

S = 200  # speech tokens of the chunk


def seg(start, end=None, words=0):
    return SegmentTimes(start, end, words)


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
