"""Rollback points for decoders: segment ends in token space."""

from __future__ import annotations

import pytest

from engine.backends.vibevoice.boundary import segment_boundary
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
