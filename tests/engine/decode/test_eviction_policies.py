"""Eviction policies: what each decode step keeps, checked against the definitions they come from.

The brute-force sets below are written from the paper's Algorithm 1, the authors' speech schedule
(`SpeechWindowLayer`: nothing while t ≤ delay, then min(rate·(t − delay), cap) dropped after the
sinks) and our own follow/anchor rules; the engine's side is the real bookkeeping (`RowTable.plan`,
`RowSlots`, `KVStore` moves) run on a store whose "keys" are the absolute positions themselves, so
every layer's visible slots can be read back as positions.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.decode.eviction import PRESETS, EvictionConfig, LayerRange, make_policy, parse_layer_ranges
from engine.decode.kv_store import KVStore
from engine.decode.layout import ANCHOR_LAG, RowLayout, SpeechRule
from engine.decode.rows import RowTable
from engine.decode.slots import RowSlots

LAYERS = 3


def brute_speech(policy: EvictionConfig, j: int, s: int, anchor: int) -> set[int]:
    """Speech indices a step keeps, from each policy's definition."""
    sink = min(policy.speech_sink, s)
    if policy.policy in ("speech", "both"):
        t, cap = j + 1, max(s - sink - policy.speech_window, 0)
        dropped = 0 if t <= policy.delay else min(math.floor(policy.speech_rate * (t - policy.delay)), cap)
        return set(range(sink)) | set(range(sink + dropped, s))
    if policy.policy == "speech-follow":
        size = min(policy.speech_window, s - sink) if policy.speech_window else s - sink
        moved = math.floor(policy.speech_rate * max(j - policy.delay + 1, 0))
        start = sink + min(moved, s - sink - size)
        return set(range(sink)) | set(range(start, start + size))
    if policy.policy == "speech-anchor":
        front = (
            sink
            if anchor < 0
            else min(max(anchor - policy.look_back, sink), max(sink, s - policy.look_ahead))
        )
        return set(range(sink)) | set(range(front, s))
    return set(range(s))


def brute_visible(
    layout: RowLayout, policy: EvictionConfig, j: int, layer: int, anchor: int = -1
) -> set[int]:
    p, s0, s = layout.prompt_len, layout.speech_start, layout.speech_len
    keep = set(range(s0)) | set(range(s0 + s, p))
    rule = policy
    if policy.layers:
        found = next((r for r in policy.layers if r.covers(layer)), None)
        rule = (
            policy  # the authors: a layer outside every range follows the policy
            if found is None
            else EvictionConfig("none")
            if found.keep
            else replace(
                policy,
                speech_sink=policy.speech_sink if found.sink is None else found.sink,
                speech_window=policy.speech_window if found.window is None else found.window,
                delay=policy.delay if found.delay is None else found.delay,
                speech_rate=policy.speech_rate if found.rate is None else found.rate,
            )
        )
    keep |= {s0 + i for i in brute_speech(rule, j, s, anchor)}
    for i in range(j + 1):
        evicts_output = policy.policy in ("output", "both")
        if not evicts_output or i < policy.n_sink or i >= j - policy.output_window + 1:
            keep.add(p + i)
    return keep


def positions_store(rows: int) -> KVStore:
    return KVStore(LAYERS, 1, 1, rows, torch.float64, torch.device("cpu"))


def run_rows(layouts: list[RowLayout], resumes: list[int], steps: int, anchor_at=lambda j: -1):
    """Drive the real row bookkeeping; yield (step, row, layer, visible positions) after every write."""
    store, table = positions_store(len(layouts)), RowTable(len(layouts))
    groups = [torch.tensor([i for i, g in enumerate(layouts[0].layer_group) if g == k]) for k in range(3)]
    for layout, resume in zip(layouts, resumes, strict=True):
        slots = RowSlots(layout, resume, anchor_at(resume - 1))
        total = layout.prompt_len + resume
        keys = torch.arange(total, dtype=torch.float64).reshape(1, 1, total, 1).expand(LAYERS, 1, total, 1)
        store.import_row(table.n, layout, keys, keys.clone(), slots.held)
        table.occupy(None, slots, [0] * (resume + 1), anchor_at(resume))  # type: ignore[arg-type]
    for _ in range(steps):
        plan = table.plan()
        for g, move in enumerate(plan.moves):
            if move is not None:
                store.move(groups[g], *(torch.from_numpy(a) for a in move))
        for g, copy in enumerate(plan.speech):
            if copy is not None:
                store.copy_speech(groups[g], *(torch.from_numpy(a) for a in copy))
        fed = torch.from_numpy(plan.positions).double()[:, None]  # the fed token's "key" is its position
        for layer, g in enumerate(layouts[0].layer_group):
            store.write(layer, fed, fed, store.flat_index(torch.from_numpy(plan.slots[g])))
        for row in range(table.n):
            for layer, g in enumerate(layouts[0].layer_group):
                seen = store.k[layer, row, 0, : plan.seqlen[g, row], 0].long().tolist()
                yield int(plan.chosen[row] - 1), row, layer, seen
        table.append(np.ones(table.n, dtype=np.int64), np.zeros(table.n, dtype=bool))
        table.anchor[: table.n] = [anchor_at(int(j)) for j in table.step[: table.n]]


RANGES = [
    (LayerRange(0, 1, keep=True),),  # layer 0 keeps its speech, the others follow the policy
    (LayerRange(1, None, sink=1, window=3, rate=2),),
    (LayerRange(1, 2),),
]
ranges = st.sampled_from([(), *RANGES])
policies = st.builds(
    EvictionConfig,
    policy=st.sampled_from(["none", "output", "speech", "both", "speech-follow", "speech-anchor"]),
    n_sink=st.integers(0, 4),
    output_window=st.integers(1, 9),
    speech_sink=st.integers(0, 4),
    speech_window=st.integers(0, 12),
    delay=st.integers(0, 8),
    speech_rate=st.sampled_from([0.5, 1.0, 3.0, 8.0]),
    look_back=st.integers(0, 5),
    look_ahead=st.integers(0, 6),
    layers=ranges,
)
shapes = st.tuples(st.integers(0, 5), st.integers(0, 30), st.integers(0, 5))  # sys1, speech, sys2


def _anchor(j: int) -> int:
    return -1 if j < 4 else 2 * j  # no timestamp for four steps, then two speech tokens a step


@settings(max_examples=60, deadline=None)
@given(policy=policies, shape=shapes, j=st.integers(0, 40))
def test_layout_visibility_is_each_policys_retained_set(policy, shape, j):
    head, speech, tail = shape
    layout = make_policy(policy).layout(head + speech + tail, (head, head + speech), 64, LAYERS)
    for layer in range(LAYERS):
        g = layout.layer_group[layer]
        expected = brute_visible(layout, policy, j, layer, _anchor(j))
        assert set(layout.visible(j, g, _anchor(j)).tolist()) == expected
        assert layout.counts(g, j, _anchor(j)) == len(expected)


@settings(max_examples=60, deadline=None)
@given(policy=policies, shape=shapes, j=st.integers(0, 40))
def test_the_kept_share_and_the_speech_reader_spans_are_what_each_layer_keeps(policy, shape, j):
    """`kept_fraction` is the kept % eval and bench report; `speech_kept` tells the speech reader
    which spans of each evicting group are still held."""
    head, speech, tail = shape
    prompt = head + speech + tail
    layout = make_policy(policy).layout(prompt, (head, head + speech), 64, LAYERS)
    a = _anchor(j)
    held = [brute_visible(layout, policy, j, layer, a) for layer in range(LAYERS)]
    assert layout.kept_fraction(j, a) == pytest.approx(sum(map(len, held)) / LAYERS / (prompt + j + 1))
    spans = iter(layout.speech_kept(j, a))
    for g, rule in enumerate(layout.rules):
        if not rule.evicts:
            continue
        sinks, lo, hi = next(spans)
        layer = layout.layer_group.index(g)
        kept_speech = {p - head for p in held[layer] if head <= p < head + speech}
        assert set(range(sinks)) | set(range(lo, hi)) == kept_speech
    assert next(spans, None) is None


@settings(max_examples=40, deadline=None)
@given(policy=policies, shapes=st.lists(shapes, min_size=1, max_size=3), resume=st.integers(0, 12))
def test_store_holds_exactly_the_visible_tokens_of_every_layer_at_every_step(policy, shapes, resume):
    layouts = [make_policy(policy).layout(h + s + t, (h, h + s), 64, LAYERS) for h, s, t in shapes]
    resumes = [resume if r == 0 else 0 for r in range(len(layouts))]  # one row resumes mid-output
    for j, row, layer, seen in run_rows(layouts, resumes, steps=30, anchor_at=_anchor):
        assert len(seen) == len(set(seen)), "an entry was held twice"
        assert set(seen) == brute_visible(layouts[row], policy, j, layer, _anchor(j))


def test_the_authors_schedule_drops_rate_tokens_per_step_after_the_delay_and_keeps_the_last_window():
    policy = EvictionConfig("speech", speech_sink=4, speech_window=10, delay=3, speech_rate=8)
    layout = make_policy(policy).layout(2 + 100 + 3, (2, 102), 40, 1)
    dropped = [int(layout.speech(0, j)[1]) - 4 for j in range(16)]  # t = j + 1
    assert dropped == [0, 0, 0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 86, 86, 86]  # cap = 100 - 4 - 10
    assert set(layout.visible(30)[2:20].tolist()) >= {2, 3, 4, 5}  # the four speech sinks stay


def test_front_eviction_needs_no_speech_copy_and_less_memory_than_none_for_a_300_second_chunk():
    none = make_policy(EvictionConfig("none")).layout(2350, (60, 2310), 2700, 28)
    speech = make_policy(PRESETS["paper-speech"]).layout(2350, (60, 2310), 2700, 28)
    assert not speech.follows and speech.capacity < none.capacity == 2350 + 2700
    assert speech.capacity == 2350 - (2250 - 32 - 1024) + 2700  # the peak is at the end
    store, speech = (
        positions_store(1),
        make_policy(PRESETS["paper-speech"]).layout(2350, (60, 2310), 2700, LAYERS),
    )
    store.import_row(0, speech, torch.zeros(LAYERS, 1, 2350, 1), torch.zeros(LAYERS, 1, 2350, 1),
                     RowSlots(speech, 0).held)  # fmt: skip
    assert store.speech_capacity == 0


def test_a_step_moves_at_most_the_entries_it_drops_in_a_fixed_store():
    policy = EvictionConfig(
        "both", n_sink=2, output_window=4, speech_sink=2, speech_window=6, delay=1, speech_rate=3
    )
    layout = make_policy(policy).layout(40, (4, 34), 64, LAYERS)
    slots = RowSlots(layout, 0)
    for j in range(40):
        (step, *_) = slots.advance(j)
        assert step.move_src.size <= 4 and step.length <= layout.capacity


def test_presets_read_the_paper_both_ways_and_options_override_them():
    assert (PRESETS["paper-speech"].delay, PRESETS["paper-speech"].speech_sink) == (512, 32)
    assert set(PRESETS) == {"paper-output", "paper-speech", "paper-both"}  # other rows: parameters
    assert PRESETS["paper-speech"].speech_rate == 8 and PRESETS["paper-both"].output_window == 1024
    both = EvictionConfig.from_options("both", n_sink=8, output_window=256, speech_window=512, delay=256)
    assert (both.n_sink, both.output_window, both.speech_window, both.delay) == (8, 256, 512, 256)
    assert EvictionConfig.from_options("speech-follow").speech_rate == 1.0
    assert not EvictionConfig.from_options(None).evicts
    with pytest.raises(ValueError, match="unknown eviction policy"):
        EvictionConfig("sometimes")
    with pytest.raises(ValueError):
        EvictionConfig("output", output_window=0)


def test_layer_ranges_mean_what_the_authors_json_means_and_reject_overlaps():
    ranges = parse_layer_ranges('[{"start": 14, "end": null, "speech_window": 256}, {"start": 0, "end": 14}]')
    assert ranges == (LayerRange(0, 14), LayerRange(14, None, window=256))
    config = EvictionConfig.from_options("paper-speech", layers='[{"start": 20, "slide_rate": 4}]')
    assert config == EvictionConfig.from_options(
        "paper-speech", layers=[{"start": 20, "rate": 4}]
    )  # decoded JSON
    layout = make_policy(config).layout(2350, (60, 2310), 2700, 28)
    uncovered = layout.rules[layout.layer_group[0]]  # the authors: outside every range, the policy's own
    assert layout.groups == 2 and (uncovered.kind, uncovered.window, uncovered.delay) == ("front", 1024, 512)
    assert layout.rules[layout.layer_group[27]].rate == 4
    kept = EvictionConfig.from_options("paper-speech", layers='[{"start": 0, "end": 20, "keep": true}]')
    layout = make_policy(kept).layout(2350, (60, 2310), 2700, 28)
    assert layout.rules[layout.layer_group[0]].kind == "keep"
    assert layout.rules[layout.layer_group[20]].rate == 8
    with pytest.raises(ValueError, match="overlap"):
        parse_layer_ranges('[{"start": 0, "end": 10}, {"start": 5}]')
    with pytest.raises(ValueError, match="unknown layer range key"):
        parse_layer_ranges('[{"start": 0, "width": 3}]')


def test_a_row_has_room_for_its_whole_prompt_even_when_its_first_step_drops_speech():
    policy = EvictionConfig("speech", speech_sink=0, speech_window=0, delay=0, speech_rate=10)
    layout = make_policy(policy).layout(12, (1, 11), 4, LAYERS)  # all 10 speech tokens go at step 0
    assert layout.counts(0, 0) == 2 + 1 and layout.capacity == 12  # the import holds all 12
    for j, _, layer, seen in run_rows([layout], [0], steps=3):
        assert set(seen) == brute_visible(layout, policy, j, layer)


@pytest.mark.parametrize("field", ["sink", "window", "delay", "back", "ahead", "rate", "lag"])
def test_each_negative_speech_rule_setting_is_refused(field):
    SpeechRule("front", sink=0, window=0, delay=0, rate=0.0, back=0, ahead=0)
    with pytest.raises(
        ValueError, match=r"^speech sinks, window, delay, rate and margins must not be negative$"
    ):
        SpeechRule("front", **{field: -1})
    with pytest.raises(ValueError, match=r"^unknown speech rule 'middle'$"):
        SpeechRule("middle")


def test_a_row_layout_refuses_a_speech_span_outside_its_prompt_negative_outputs_and_unknown_groups():
    with pytest.raises(ValueError, match=r"^the speech span must lie inside the prompt$"):
        RowLayout(prompt_len=10, speech_start=5, speech_len=6, max_new_tokens=8)
    for sinks, window in ((-1, 0), (0, -1)):
        with pytest.raises(ValueError, match=r"^output sinks and window must not be negative$"):
            RowLayout(10, 0, 5, 8, n_sink=sinks, out_window=window)
    for groups in ((), (0, 1)):
        with pytest.raises(ValueError, match=r"^every layer must belong to one of the layout's groups$"):
            RowLayout(10, 0, 5, 8, layer_group=groups)


def test_the_planned_anchor_trails_an_evenly_moving_transcript_by_the_lag():
    anchor = (SpeechRule("anchor"),)
    lag = math.ceil(ANCHOR_LAG * 100)  # 5 speech tokens
    even = RowLayout(prompt_len=110, speech_start=10, speech_len=100, max_new_tokens=100, rules=anchor)
    steps = np.arange(100)
    assert even.planned_anchor(steps).tolist() == [k + 1 - lag if k + 1 >= lag else -1 for k in steps]
    assert even.planned_anchor(4) == 0  # the first step with an anchor points at the first token
    half = RowLayout(prompt_len=110, speech_start=10, speech_len=100, max_new_tokens=50, rules=anchor)
    assert half.planned_anchor(np.array([0, 1, 2, 49])).tolist() == [-1, -1, 6 - lag, 100 - lag]
    one = RowLayout(prompt_len=110, speech_start=10, speech_len=100, max_new_tokens=1, rules=anchor)
    assert one.planned_anchor(0) == 100 - lag
    peaks = [int(even.counts(0, j, even.planned_anchor(j))) for j in range(-1, 100)]
    assert even.peak(0) == max(peaks) < int(even.counts(0, 99))  # less than keeping all the speech
