"""The harm meter ("speech lost": evicted before the transcript had written it) also counts the
segment a row was still writing when it ended: the transcript keeps a cut-off last segment."""

from __future__ import annotations

import math

import pytest
from hf_oracle import make_requests, tiny_qwen2
from test_decode_exactness import NO_LOOP_GUARD

from engine.decode.api import SegmentTimes
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig

SPEECH = EvictionConfig("speech", speech_sink=2, speech_window=4, delay=2, speech_rate=2)


class Unclosed:
    """A reply that opens one segment over the whole chunk and never closes it (cut by the budget)."""

    tokens_per_second = 7.5

    def __init__(self, speech: int = 31) -> None:
        self.speech = speech

    def feed(self, token_ids):
        return []

    def open(self):
        return SegmentTimes(0.0, float(self.speech))


class Closing(Unclosed):
    """The same segment, closed at once by the first token: nothing is open at the end."""

    def feed(self, token_ids):
        self.closed = getattr(self, "closed", False)
        if self.closed:
            return []
        self.closed = True
        return [SegmentTimes(0.0, float(self.speech), words=40)]

    def open(self):
        return None


@pytest.fixture(scope="module")
def model():
    return tiny_qwen2()


def lost(model, tracker) -> float:
    request = make_requests([40], 30)[0]  # 31 speech tokens, 30 outputs, no EOS
    decoder = MurmurDecoder(model, EngineConfig(loop=NO_LOOP_GUARD, eviction=SPEECH), speech_anchor=tracker)
    (result,) = decoder.decode([request])
    return result.stats.speech_lost_fraction


def test_a_segment_still_open_when_the_row_ends_counts_what_the_last_step_had_evicted(model):
    steps = 28  # the step that chose the 30th output
    dropped = min(math.floor(2 * (steps + 1 - 2)), 31 - 2 - 4)  # the authors' schedule at that step
    assert lost(model, Unclosed) == pytest.approx(dropped / 31)


def test_a_segment_closed_before_anything_was_evicted_loses_nothing(model):
    assert lost(model, Closing) == 0.0


class Outrunning(Unclosed):
    """Wordless segments whose Starts run 10 speech tokens ahead per token read."""

    def feed(self, token_ids):
        self.seen = getattr(self, "seen", 0) + len(token_ids)
        return [SegmentTimes(float(min(10 * self.seen, 30)))]


def test_a_row_whose_times_outrun_its_words_reports_that_its_anchor_stopped(model):
    anchor = EvictionConfig("speech-anchor", speech_sink=2, look_back=1, look_ahead=2)
    config = EngineConfig(loop=NO_LOOP_GUARD, eviction=anchor)
    request = make_requests([40], 30)[0]
    (stopped,) = MurmurDecoder(model, config, speech_anchor=Outrunning).decode([request])
    (honest,) = MurmurDecoder(model, config, speech_anchor=Closing).decode([request])
    assert stopped.stats.anchor_stopped and stopped.stats.kv_kept_last == 1.0
    assert not honest.stats.anchor_stopped
