"""Eviction policies: what each decode step sees, checked against the paper's definitions.

The brute-force sets below are written from Algorithms 1 and 2 directly; the engine's side is the
real bookkeeping (`RowTable.plan` + `KVStore` ring writes) run on a store whose "keys" are the
absolute positions themselves, so the visible slots can be read back as positions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.decode.eviction import PRESETS, EvictionConfig, make_policy
from engine.decode.kv_store import KVStore
from engine.decode.layout import RowLayout
from engine.decode.rows import RowTable


def brute_visible(layout: RowLayout, policy: EvictionConfig, j: int) -> set[int]:
    """Positions decode step j attends to, from the paper's definitions."""
    p, s0, s = layout.prompt_len, layout.speech_start, layout.speech_len
    keep = set(range(s0)) | set(range(s0 + s, p))
    if policy.policy in ("speech", "both") and s > policy.speech_window:
        w = policy.speech_window
        start = 0 if j < policy.delay else min(math.floor(policy.speech_rate * (j - policy.delay + 1)), s - w)
        keep |= set(range(s0 + start, s0 + start + w))
    else:
        keep |= set(range(s0, s0 + s))
    for i in range(j + 1):
        evicts_output = policy.policy in ("output", "both")
        if not evicts_output or i < policy.n_sink or i >= j - policy.output_window + 1:
            keep.add(p + i)
    return keep


def positions_store(rows: int) -> KVStore:
    return KVStore(1, 1, 1, rows, torch.float64, torch.device("cpu"))


def import_positions(store: KVStore, row: int, layout: RowLayout, resume: int) -> None:
    total = layout.prompt_len + resume
    keys = torch.arange(total, dtype=torch.float64).reshape(1, 1, total, 1)
    store.import_row(row, layout, keys, keys.clone(), resume)


def run_rows(layouts: list[RowLayout], resumes: list[int], steps: int):
    """Drive the real row bookkeeping; yield (step, row, visible positions) after every write."""
    store, table = positions_store(len(layouts)), RowTable(len(layouts))
    for layout, resume in zip(layouts, resumes, strict=True):
        row = table.occupy(None, layout, [0] * (resume + 1))  # type: ignore[arg-type]
        import_positions(store, row, layout, resume)
    for _ in range(steps):
        plan = table.plan()
        if plan.speech is not None:
            store.copy_speech(*(torch.from_numpy(a) for a in plan.speech))
        fed = torch.from_numpy(plan.positions).double()[:, None]  # the fed token's "key" is its position
        store.write(0, fed, fed, store.flat_index(torch.from_numpy(plan.slots)))
        for row in range(table.n):
            seen = store.k[0, row, 0, : plan.seqlen[row], 0].long().tolist()
            yield int(plan.chosen[row] - 1), row, seen
        table.append(np.ones(table.n, dtype=np.int64), np.zeros(table.n, dtype=bool))


policies = st.builds(
    EvictionConfig,
    policy=st.sampled_from(["none", "output", "speech", "both"]),
    n_sink=st.integers(0, 4),
    output_window=st.integers(1, 9),
    speech_window=st.integers(1, 12),
    delay=st.integers(0, 8),
    speech_rate=st.sampled_from([0.5, 1.0, 1.5, 3.0]),
)
shapes = st.tuples(st.integers(0, 5), st.integers(0, 30), st.integers(0, 5))  # sys1, speech, sys2


@settings(max_examples=60, deadline=None)
@given(policy=policies, shape=shapes, j=st.integers(0, 40))
def test_layout_visibility_is_the_papers_retained_set(policy, shape, j):
    head, speech, tail = shape
    layout = make_policy(policy).layout(head + speech + tail, (head, head + speech), 64)
    assert set(layout.visible(j).tolist()) == brute_visible(layout, policy, j)
    assert layout.seqlen(j) == len(brute_visible(layout, policy, j))


@settings(max_examples=40, deadline=None)
@given(policy=policies, shapes=st.lists(shapes, min_size=1, max_size=3), resume=st.integers(0, 12))
def test_ring_slots_hold_exactly_the_visible_tokens_at_every_step(policy, shapes, resume):
    layouts = [make_policy(policy).layout(h + s + t, (h, h + s), 64) for h, s, t in shapes]
    resumes = [resume if r == 0 else 0 for r in range(len(layouts))]  # one row resumes mid-output
    for j, row, seen in run_rows(layouts, resumes, steps=30):
        assert len(seen) == len(set(seen)), "a slot was counted twice"
        assert set(seen) == brute_visible(layouts[row], policy, j)


def test_a_step_writes_one_output_slot_and_at_most_rate_speech_tokens_in_a_fixed_store():
    policy = EvictionConfig("both", n_sink=2, output_window=4, speech_window=6, delay=1, speech_rate=1.0)
    layout = make_policy(policy).layout(40, (4, 34), 64)
    assert layout.capacity == 4 + 6 + 6 + 2 + 4  # sys1, speech window, sys2, sinks, output ring
    store, table = positions_store(1), RowTable(1)
    table.occupy(None, layout, [0])  # type: ignore[arg-type]
    import_positions(store, 0, layout, 0)
    buffer, capacity = store.k.data_ptr(), store.capacity
    for _ in range(40):
        plan = table.plan()
        assert plan.speech is None or len(plan.speech[0]) <= 1  # one speech token in, one out
        assert plan.seqlen[0] <= layout.capacity
        if plan.speech is not None:
            store.copy_speech(*(torch.from_numpy(a) for a in plan.speech))
        table.append(np.ones(1, dtype=np.int64), np.zeros(1, dtype=bool))
    assert (store.k.data_ptr(), store.capacity) == (buffer, capacity)


def test_paper_presets_and_kept_fraction_for_a_300_second_chunk():
    layout = make_policy(PRESETS["paper-both"]).layout(2350, (60, 2310), 2700)
    assert layout.capacity == 100 + 1024 + 4 + 1024  # sys1 + sys2, speech window, sinks, output ring
    assert layout.kept_fraction(0) == pytest.approx((100 + 1024 + 1) / 2351)
    assert PRESETS["paper-speech-1538"].speech_window == 1538
    assert PRESETS["paper-output"].n_sink == 4 and PRESETS["paper-output"].output_window == 1024


def test_options_set_the_windows_of_the_chosen_policy_and_reject_nonsense():
    both = EvictionConfig.from_options("both", sink=8, window=512, delay=256, rate=2.0)
    assert (both.n_sink, both.output_window, both.speech_window, both.delay) == (8, 512, 512, 256)
    assert EvictionConfig.from_options("paper-speech").delay == 512
    assert not EvictionConfig.from_options(None).evicts
    with pytest.raises(ValueError, match="unknown eviction policy"):
        EvictionConfig("sometimes")
    with pytest.raises(ValueError):
        EvictionConfig("output", output_window=0)
