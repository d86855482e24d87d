"""Rollback points for decoders: segment ends in token space, and repetition loops in token ids."""

from __future__ import annotations

import numpy as np
import pytest

from engine.backends.vibevoice.boundary import segment_boundary
from engine.backends.vibevoice.loops import LoopDetector
from engine.backends.vibevoice.parsing import parse_reply

REPLY = (
    '<|im_start|>assistant\n[{"Start":0,"End":1.5,"Speaker":0,"Content":"Good morning, {all} of you."},'
    '{"Start":1.5,"End":3.25,"Speaker":1,"Content":"Ünïcode and \\"quotes\\" [laughs]"},'
    '{"Start":3.25,"End":4,"Speaker":0,"Content":"Last one."}]<|im_end|>'
)


@pytest.fixture(scope="module")
def tokenizer(loaded):
    return loaded.processor.tokenizer


def complete_segments(text: str) -> list:
    return [s for s in parse_reply(text, 10.0) if not s.flags]


def test_every_prefix_rolls_back_to_its_last_complete_segment(tokenizer):
    ids = tokenizer(REPLY, add_special_tokens=False)["input_ids"]
    boundary = segment_boundary(tokenizer)
    for k in range(len(ids) + 1):
        b = boundary(ids[:k])
        assert 0 <= b <= k
        kept = tokenizer.decode(ids[:b], skip_special_tokens=True)
        whole = tokenizer.decode(ids[:k], skip_special_tokens=True)
        assert complete_segments(kept) == complete_segments(whole)
        assert all(s.flags == () for s in parse_reply(kept, 10.0))  # nothing half-written is kept


def test_before_any_complete_segment_the_boundary_is_the_opening_bracket(tokenizer):
    ids = tokenizer('<|im_start|>assistant\n[{"Start":0,"End":1', add_special_tokens=False)["input_ids"]
    b = segment_boundary(tokenizer)(ids)
    assert "[" in tokenizer.decode(ids[:b]) and "[" not in tokenizer.decode(ids[: b - 1])
    assert segment_boundary(tokenizer)([]) == 0


def test_a_periodic_tail_is_a_loop_cut_back_to_one_copy():
    head = list(range(100, 140))
    pattern = [7, 8, 9, 10, 11]
    ids = head + pattern * 20
    assert LoopDetector().cut(ids) == len(head) + len(pattern)
    assert LoopDetector().cut([5] * 64) == 1


def test_varied_text_and_short_repeats_are_not_loops():
    ids = np.random.default_rng(0).integers(0, 500, 3000).tolist()  # long, never periodic
    assert LoopDetector().cut(ids) is None
    assert LoopDetector().cut([1, 2, 3] * 5) is None  # 15 tokens: below the 64-token minimum
    with pytest.raises(ValueError):
        LoopDetector(min_repeats=1)
