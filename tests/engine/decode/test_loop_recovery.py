"""Repetition loops are caught while decoding, rolled back to the last complete segment and
re-decoded; a loop that survives every retry keeps what came before it; no other row notices."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hf_oracle import embedding, markov_qwen2

from engine.decode.api import DecodeRequest
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.loop_guard import LoopDetector, LoopGuardConfig, find_loop, salvage
from engine.decode.sampling import DecodeMode
from engine.types import FinishReason

EOS, SEG1, SEG2, SEG3, A, B, C, D, X1, X2, X3, START, START2, Y1, Y2 = range(15)
SEGMENT_ENDS = {SEG1, SEG2, SEG3}
CHAIN = {  # token → {next: score}; everything else scores -10
    START: {X1: 5},
    X1: {X2: 5},
    X2: {SEG1: 5},
    SEG1: {X3: 5},
    X3: {SEG2: 5},
    SEG2: {A: 5},
    A: {B: 5},
    B: {A: 5.0, C: 4.5},  # the loop A B A B ...; a penalty of 1.15 on A lets C win
    C: {D: 5},
    D: {SEG3: 5},
    SEG3: {EOS: 5},
    START2: {Y1: 5},
    Y1: {Y2: 5},
    Y2: {SEG3: 5},
}
BEFORE_LOOP = (X1, X2, SEG1, X3, SEG2)
GUARD = {"max_period": 4, "min_repeats": 4, "min_tokens": 8}


def segment_boundary(tokens) -> int:
    """Length of the prefix ending with the last segment-end token (what a JSON parser would say)."""
    ends = [i + 1 for i, t in enumerate(tokens) if t in SEGMENT_ENDS]
    return ends[-1] if ends else 0


@pytest.fixture(scope="module")
def model():
    scores = torch.full((16, 16), -10.0)
    for token, options in CHAIN.items():
        for nxt, score in options.items():
            scores[token, nxt] = score
    return markov_qwen2(scores)


def request(model, rid: int, start: int, budget: int = 60) -> DecodeRequest:
    prompt = torch.randn(
        6, model.config.hidden_size, generator=torch.Generator().manual_seed(rid), dtype=torch.float64
    )
    prompt[-1] = embedding(model, start)
    return DecodeRequest(rid, prompt, (1, 4), budget)


def decode(model, requests, retries, max_batch=2, boundary=segment_boundary):
    loop = LoopGuardConfig(retries=retries, **GUARD)
    decoder = MurmurDecoder(model, EngineConfig(max_batch=max_batch, loop=loop), (EOS,), boundary)
    return {r.id: r for r in decoder.decode(requests)}


def test_a_looping_row_is_rolled_back_and_recovered_by_a_repetition_penalty(model):
    result = decode(model, [request(model, 0, START)], (DecodeMode(repetition_penalty=1.15),))[0]
    assert result.token_ids == (*BEFORE_LOOP, A, B, C, D, SEG3)
    assert result.finish_reason == FinishReason.EOS
    assert result.stats.retries == 1
    assert result.stats.rolled_back_tokens > 0 and result.stats.salvage_dropped_tokens == 0  # reported


def test_a_loop_no_retry_can_break_keeps_the_output_before_the_loop(model):
    result = decode(model, [request(model, 0, START)], (DecodeMode(repetition_penalty=1.01),))[0]
    assert result.finish_reason == FinishReason.LOOP
    assert result.token_ids == (*BEFORE_LOOP, A, B)  # the segments before the loop, and one repetition
    assert result.stats.retries == 1
    assert result.stats.rolled_back_tokens > 0 and result.stats.salvage_dropped_tokens > 0  # reported


def test_without_a_segment_boundary_the_row_resumes_where_the_loop_began(model):
    result = decode(model, [request(model, 0, START)], (DecodeMode(repetition_penalty=1.15),), boundary=None)[
        0
    ]
    assert result.token_ids == (*BEFORE_LOOP, A, B, C, D, SEG3)


def test_one_requests_loop_costs_the_others_nothing(model):
    weak = (DecodeMode(repetition_penalty=1.01), DecodeMode(repetition_penalty=1.02))
    others = [request(model, i, START2) for i in (1, 2, 3)]
    alone = {r.id: decode(model, [r], weak)[r.id] for r in others}
    for batch in (1, 2):
        mixed = decode(model, [request(model, 0, START), *others], weak, max_batch=batch)
        assert mixed[0].finish_reason == FinishReason.LOOP and mixed[0].stats.retries == 2
        for r in others:
            assert mixed[r.id].token_ids == alone[r.id].token_ids == (Y1, Y2, SEG3)
            assert mixed[r.id].stats.retries == 0


def test_sampling_retries_are_reproducible_alone_and_in_a_batch(model):
    retries = (DecodeMode(temperature=1.0, seed=7),)
    alone = decode(model, [request(model, 0, START)], retries)[0]
    batched = decode(model, [request(model, 5, START2), request(model, 0, START)], retries)[0]
    again = decode(model, [request(model, 0, START)], retries)[0]
    assert alone.token_ids == batched.token_ids == again.token_ids
    assert alone.token_ids[: len(BEFORE_LOOP)] == BEFORE_LOOP


def test_the_detector_flags_repeated_ngrams_not_short_repetitions():
    config = LoopGuardConfig(max_period=4, min_repeats=4, min_tokens=12)
    detector = LoopDetector(1, config)
    tokens = [1, 2, 3] + [7] * 5 + [4, 5, 6] + [8, 9] * 8  # "ha ha ha ha ha" is fine; "8 9" × 8 is not
    history = np.array([tokens])
    flagged_at, loops = [], []
    for i, token in enumerate(tokens):
        if detector.update(history, np.array([i]), np.array([token])).size:
            flagged_at.append(i)
            loops.append(detector.loop(0, i))
    assert flagged_at and flagged_at[0] == 11 + 12 - 1  # 12 tokens of "8 9" complete the loop
    assert (loops[0].start, loops[0].period) == (11, 2)


def test_a_periodic_tail_is_a_loop_cut_back_to_one_copy():
    head = list(range(100, 140))
    pattern = [7, 8, 9, 10, 11]
    ids = head + pattern * 20
    assert len(salvage(ids, find_loop(ids, LoopGuardConfig()))) == len(head) + len(pattern)
    assert len(salvage([5] * 64, find_loop([5] * 64, LoopGuardConfig()))) == 1


def test_varied_text_and_short_repeats_are_not_loops():
    ids = np.random.default_rng(0).integers(0, 500, 3000).tolist()  # long, never periodic
    assert find_loop(ids, LoopGuardConfig()) is None
    assert find_loop([1, 2, 3] * 5, LoopGuardConfig()) is None  # 15 tokens: below the 64-token minimum
    with pytest.raises(ValueError):
        LoopGuardConfig(min_repeats=1)


@pytest.mark.parametrize("seed", range(20))
def test_the_incremental_detector_agrees_with_rescanning_the_tokens(seed):
    """`LoopDetector` (one update per token, used while decoding) flags a row exactly when
    `find_loop` (a rescan, used by the reference decoder) first finds a loop, at the same place."""
    rng = np.random.default_rng(seed)
    config = LoopGuardConfig(max_period=6, min_repeats=3, min_tokens=10)
    tokens = rng.integers(0, 4, 30).tolist() + rng.integers(0, 4, rng.integers(1, 7)).tolist() * 12
    detector = LoopDetector(1, config)
    history = np.array([tokens])
    for i, token in enumerate(tokens):
        flagged = detector.update(history, np.array([i]), np.array([token])).size > 0
        rescanned = find_loop(tokens[: i + 1], config)
        assert flagged == (rescanned is not None)
        if flagged:
            assert detector.loop(0, i) == rescanned
            break
    else:
        pytest.fail("a pattern repeated 12 times was never flagged")
