"""`speech-anchor` v2 never evicts speech a segment still to be written needs, whatever times the
model writes: overlapping turns, a wrong End, an inverted pair, absolute times, and random streams.

Each reply is a stream of segments: the times the model *writes* (which the anchor reads) and the
audio the segment really covers (which must still be held while it is written). The row is driven
through the engine's own reader (`RowReader`) and eviction rule, step by step, with the one-step lag
the scheduler uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.decode.anchor import COVER, RECENT, TEXT_SLACK, GuardedAnchor, RowReader
from engine.decode.api import SegmentTimes
from engine.decode.layout import SpeechRule, speech_at
from engine.decode.voiced import Voiced

RATE = 7.5  # speech tokens per second (VibeVoice)
S = 2250  # a 300 s chunk
RULE = SpeechRule("anchor", sink=32, back=64, ahead=256)


@dataclass(frozen=True)
class Written:
    start: float | None  # seconds, as written
    end: float | None
    needs: tuple[float, float] | None  # seconds of audio the segment really covers (None: nothing)
    tokens: int = 30  # output tokens the segment takes


class Script:
    """A tracker that closes each scripted segment on its last token."""

    def __init__(self, segments: list[Written]) -> None:
        self.closing = {}
        k = 0
        for seg in segments:
            k += seg.tokens
            self.closing[k - 1] = seg
        self.read = 0

    def feed(self, token_ids):
        out = []
        for _ in token_ids:
            seg = self.closing.get(self.read)
            self.read += 1
            if seg is not None:
                times = [None if t is None else t * RATE for t in (seg.start, seg.end)]
                out.append(SegmentTimes(*times))
        return out


def replay(segments: list[Written]) -> tuple[int, int]:
    """(speech tokens a segment needed while being written but were gone, final kept start `lo`)."""
    reader = RowReader(Script(segments), S, None)
    lost, first = 0, 0
    for seg in segments:
        for k in range(first, first + seg.tokens):  # output k is chosen by step k - 1
            step = k - 1
            lo, _ = speech_at(RULE, step, S, reader.anchor_before(step))
            if seg.needs is not None:
                need_lo = int(seg.needs[0] * RATE)
                need_hi = min(int(seg.needs[1] * RATE) + 1, S)
                gone = max(0, min(lo, need_hi) - max(need_lo, RULE.sink))
                lost = max(lost, gone)
            reader.feed(0, step)
        first += seg.tokens
    lo, _ = speech_at(RULE, first, S, reader.anchor_before(first))
    return lost, lo


def monotonic(start: float, stop: float, step: float = 5.0) -> list[Written]:
    out, t = [], start
    while t < stop:
        out.append(Written(t, t + step - 1, (t, t + step - 1)))
        t += step
    return out


def test_a_monotonic_transcript_loses_nothing_and_the_anchor_follows_it():
    lost, lo = replay(monotonic(0, 290))
    assert lost == 0
    assert lo > 250 * RATE  # evicts all but the last few segments' audio: memory is saved


def test_an_overlapping_turn_keeps_its_audio_until_it_is_written():
    # A 10–40 s, then B 12–20 s inside it (a back-channel): B's audio must survive A
    script = [*monotonic(0, 10), Written(10, 40, (10, 40)), Written(12, 20, (12, 20)), *monotonic(40, 200)]
    assert replay(script)[0] == 0


def test_one_wrong_end_does_not_evict_the_following_segments():
    script = [*monotonic(0, 5), Written(5, 250, (5, 6)), *monotonic(6, 200)]
    lost, lo = replay(script)
    assert lost == 0 and lo > 150 * RATE


def test_an_inverted_jumped_pair_does_not_evict_what_follows():
    script = [*monotonic(0, 6), Written(26, 25.9, (6, 7)), *monotonic(7, 200)]
    lost, lo = replay(script)
    assert lost == 0 and lo > 150 * RATE


def test_an_absolute_time_past_the_chunk_is_ignored():
    script = [*monotonic(0, 8), Written(601, 605, (8, 9)), *monotonic(9, 200)]
    lost, lo = replay(script)
    assert lost == 0 and lo > 150 * RATE


def test_a_wild_start_inside_the_chunk_moves_nothing_while_true_starts_surround_it():
    script = [*monotonic(0, 20), Written(250, 251, (20, 21)), *monotonic(21, 200)]
    assert replay(script)[0] == 0


def test_the_first_starts_do_not_move_the_anchor():
    reader = RowReader(Script([Written(100, 101, (100, 101))] * (RECENT - 1)), S, None)
    for k in range(30 * (RECENT - 1)):
        reader.feed(0, k - 1)
    assert reader.anchor_before(30 * (RECENT - 1)) == -1


@st.composite
def streams(draw) -> list[Written]:
    """Honest segments in start order (overlaps and inversions up to the look-back allowed), with
    wrong-End, inverted, absolute and wild-Start segments mixed in: never `RECENT` wild ones in a row
    among the segments the guards accept (that many in a row would move the anchor: the limit of the
    guarantee)."""
    out: list[Written] = []
    top, wild_run = 0.0, 0
    for _ in range(draw(st.integers(5, 60))):
        tokens = draw(st.integers(1, 80))
        kind = draw(st.sampled_from(["honest"] * 6 + ["end", "inverted", "absolute", "wild"]))
        jitter = draw(st.floats(0, (RULE.back - 1) / RATE))
        start = min(max(top - jitter, 0) + draw(st.floats(0, 12)), 299.0)
        length = draw(st.floats(0.1, 40))
        needs = (start, min(start + length, 300.0))
        if kind == "wild" and wild_run == RECENT - 1:
            kind = "honest"
        if kind in ("honest", "end", "wild"):  # the ones the guards accept
            wild_run = wild_run + 1 if kind == "wild" else 0
        if kind == "honest":
            seg = Written(start, needs[1], needs, tokens)
            top = max(top, start)
        elif kind == "end":
            seg = Written(start, draw(st.floats(start, 300)), needs, tokens)
            top = max(top, start)
        elif kind == "inverted":
            written = draw(st.floats(0, 299))
            seg = Written(written, written - draw(st.floats(0.01, 30)), needs, tokens)
        elif kind == "absolute":
            written = draw(st.floats(300.5, 3600))
            seg = Written(written, written + length, needs, tokens)
        else:
            written = draw(st.floats(0, 299))
            seg = Written(written, written + 1, (start, start), tokens)
        out.append(seg)
        if kind in ("inverted", "absolute"):
            top = max(top, start)
    return out


@settings(max_examples=300, deadline=None)
@given(streams())
def test_no_random_stream_loses_speech_a_later_segment_needs(script):
    assert replay(script)[0] == 0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 299), st.floats(0.1, 30), st.integers(1, 60)), max_size=80))
def test_sorted_starts_with_any_lengths_lose_nothing(raw):
    script = [Written(s, s + d, (s, min(s + d, 300)), n) for s, d, n in sorted(raw)]
    assert replay(script)[0] == 0


def closed(starts, words=0):
    return [SegmentTimes(float(s), float(s) + 1, words=words) for s in starts]


def test_a_jump_after_the_anchor_moved_is_clipped_to_the_tokens_written_since_it_moved():
    anchor = GuardedAnchor(S)
    assert anchor.read(closed([10, 11, 12]), written=100) == 10
    # 10 output tokens later three Starts claim 500 s: the anchor may move COVER tokens per token
    assert anchor.read(closed([500, 501, 502]), written=110) == 10 + int(COVER * 10)


def test_the_anchor_moves_no_further_than_the_new_words_can_cover():
    anchor = GuardedAnchor(S, per_word=5.0)
    assert anchor.read(closed([10, 11, 12], words=10), written=30) == 10
    assert anchor.read(closed([40, 41, 42]), written=300) == 10  # repeated text: no new words
    assert anchor.read(closed([43], words=2), written=310) == 10 + 5 * 2


def test_a_start_past_what_the_words_before_it_reach_stops_the_anchor_for_good():
    near, far = GuardedAnchor(S, per_word=5.0), GuardedAnchor(S, per_word=5.0)
    for anchor, start in ((near, 10 + TEXT_SLACK), (far, 10 + TEXT_SLACK + 1)):
        anchor.read(closed([0], words=2), written=10)  # 2 words reach 10 tokens at most
        anchor.read(closed([start], words=2), written=20)
    assert not near.stopped and far.stopped
    honest = [closed([s], words=40) for s in (40, 50, 60, 70)]
    assert [far.read(s, written=400 + 100 * i) for i, s in enumerate(honest)][-1] == -1  # never again
    assert [near.read(s, written=400 + 100 * i) for i, s in enumerate(honest)][-1] == 50


def test_the_words_reach_across_silence_the_vad_found_but_never_past_the_next_speech():
    voiced = Voiced(100, [(0, 10), (50, 60)])
    assert voiced.total == 20
    assert voiced.reach(10) == 50 and voiced.reach(9) == 9  # through the pause, not into the speech
    assert voiced.first(np.array([10, 11, 25])).tolist() == [10, 51, 100]
