"""Anchored rows are sized for the lag the anchor really has (`RowLayout.anchor_lag`).

A transcript of evenly spaced turns is read by the engine's own anchor (`RowReader`, the one-step lag
included) and the row's entries are counted under the `speech-anchor` rule the policy makes: the row
never holds more than its planned capacity, and a plan one segment shorter would be too small, so
the lag is `ANCHOR_RECENT + 1` segments, not `ANCHOR_RECENT`. `murmur kv-plan` sizes rows with the
same rule (`speech_rule`), and on a 300 s chunk the 5 % share still decides.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from engine.decode.anchor import RECENT, RowReader
from engine.decode.api import SegmentTimes
from engine.decode.eviction import EvictionConfig, make_policy, speech_rule
from engine.decode.layout import ANCHOR_LAG, ANCHOR_RECENT, RowLayout, SpeechRule, anchor_trail
from engine.decode.plan import SHAPES, chunk_layout

SYSTEM = 59  # system tokens around the speech, as in the tiny checkpoint's requests


class Turns:
    """A tracker closing segment k, speech [k·turn, (k+1)·turn), on output token (k+1)·every − 1."""

    def __init__(self, turn: int, every: int) -> None:
        self.turn, self.every, self.read = turn, every, 0

    def feed(self, token_ids: list[int]) -> list[SegmentTimes]:
        out = []
        for _ in token_ids:
            self.read += 1
            if self.read % self.every == 0:
                k = self.read // self.every - 1
                out.append(SegmentTimes(k * self.turn, (k + 1) * self.turn, words=10))
        return out


def anchored(turn: int, speech: int, budget: int) -> RowLayout:
    config = EvictionConfig("speech-anchor", speech_sink=8, look_back=64, look_ahead=32, turn_tokens=turn)
    return make_policy(config).layout(SYSTEM + speech, (SYSTEM, SYSTEM + speech), budget, 2)


def most_held(layout: RowLayout, turn: int, every: int) -> int:
    """Most entries the row holds while the engine's anchor reads the turns as they close."""
    reader = RowReader(Turns(turn, every), layout.speech_len, None)
    held = int(layout.counts(0, -1))
    for k in range(layout.max_new_tokens):
        reader.feed(0, k - 1)  # output k (chosen by step k − 1)
        held = max(held, int(layout.counts(0, k, reader.anchor_before(k))))  # step k feeds it
    return held


@pytest.mark.parametrize(("turn", "turns", "every"), [(27, 10, 33), (27, 6, 40), (40, 8, 30)])
def test_a_row_of_even_turns_never_outgrows_its_plan_and_one_segment_less_would(turn, turns, every):
    layout = anchored(turn, turn * turns, every * turns)
    assert layout.anchor_lag == (RECENT + 1) * turn > math.ceil(ANCHOR_LAG * layout.speech_len)
    held = most_held(layout, turn, every)
    assert held <= layout.capacity
    short = replace(layout.rules[0], lag=layout.anchor_lag - turn)  # the anchor's `RECENT` segments only
    assert replace(layout, rules=(short,)).capacity < held


def test_the_planned_lag_is_the_larger_of_the_share_and_the_rules_lag():
    anchor = SpeechRule("anchor", lag=30)
    row = RowLayout(prompt_len=110, speech_start=10, speech_len=100, max_new_tokens=100, rules=(anchor,))
    assert row.anchor_lag == 30
    assert row.planned_anchor(29).item() == 0 and row.planned_anchor(28).item() == -1
    long = replace(row, prompt_len=1010, speech_len=1000)
    assert long.anchor_lag == math.ceil(ANCHOR_LAG * 1000) == 50  # the share, when it is more
    kept = replace(row, rules=(SpeechRule("keep", lag=30), SpeechRule("anchor")), layer_group=(0, 1))
    assert kept.anchor_lag == 5  # only an anchored rule's lag counts


def test_the_policy_and_kv_plan_plan_the_anchor_segments_behind():
    config = EvictionConfig("speech-anchor", turn_tokens=40)
    assert speech_rule(config, "anchor").lag == anchor_trail(40) == (ANCHOR_RECENT + 1) * 40 == 160
    assert speech_rule(config, "front").lag == speech_rule(config, "follow").lag == 0
    shape = SHAPES["qwen2.5-7b"]
    planned = chunk_layout(config, shape, 60.0, 600)  # 450 speech tokens: 5 % is 23
    assert planned.anchor_lag == 160
    assert planned.capacity > chunk_layout(replace(config, turn_tokens=0), shape, 60.0, 600).capacity
    paper = chunk_layout(EvictionConfig("speech-anchor"), shape, 300.0, 2730)  # 2250 tokens: 5 % is 113
    assert paper.anchor_lag == 113 > anchor_trail(EvictionConfig().turn_tokens)
    with pytest.raises(ValueError, match=r"^sink counts, delay, margins and the turn must not be negative$"):
        EvictionConfig("speech-anchor", turn_tokens=-1)
