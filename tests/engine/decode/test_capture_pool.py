"""Captured steps share one memory pool while any of them lives, and start a new one once all are
released (CUDA's allocator refuses a capture into a pool whose graphs are gone); the emulated
capture refuses what CUDA would refuse."""

from __future__ import annotations

import pytest
import torch
from gpu_parts import Lagging
from hf_oracle import make_requests, tiny_qwen2

from engine.decode.capture import EmulatedCapture
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig
from engine.decode.loop_guard import LoopGuardConfig

BUFFER = torch.zeros(4)
NO_LOOPS = LoopGuardConfig(enabled=False)


def step() -> torch.Tensor:
    return BUFFER + 1


def inputs() -> dict[str, torch.Tensor]:
    return {"buffer": BUFFER}


def test_captures_share_a_pool_while_one_of_its_graphs_lives():
    capture = EmulatedCapture()
    first = capture(step, inputs)
    pool = capture.pool.handle
    second = capture(step, inputs)
    del first
    capture(step, inputs)  # the second graph still holds the pool
    assert capture.pool.handle == pool
    assert second.replay().tolist() == [1.0] * 4


def test_a_capture_after_every_graph_was_released_starts_a_new_pool():
    capture = EmulatedCapture()
    first = capture(step, inputs)
    pool = capture.pool.handle
    del first
    capture(step, inputs)
    assert capture.pool.handle != pool


def test_the_emulation_refuses_a_pool_none_of_whose_graphs_lives(monkeypatch):
    capture = EmulatedCapture()
    first = capture(step, inputs)
    stale = capture.pool.handle
    del first
    monkeypatch.setattr(capture.pool, "current", lambda: stale)  # a pool kept past its graphs
    with pytest.raises(RuntimeError, match="none of whose graphs is alive"):
        capture(step, inputs)


def test_a_store_growing_under_captured_steps_decodes_what_eager_decodes():
    """The store grows mid-decode, the cache of captured steps is emptied and captured again."""
    model = tiny_qwen2()
    anchor = EvictionConfig("speech-anchor", speech_sink=2, look_back=3, look_ahead=5, turn_tokens=0)
    requests = make_requests([40, 47, 35, 52, 30], [24, 12, 24, 18, 24])
    got, growths = {}, {}
    for graphs in (False, True):
        config = EngineConfig(max_batch=3, eviction=anchor, kv_slots=1, emulate_graphs=graphs, loop=NO_LOOPS)
        decoder = MurmurDecoder(model, config, speech_anchor=Lagging)
        got[graphs] = {r.id: r.token_ids for r in decoder.decode(requests)}
        growths[graphs] = decoder.stats.growths
    assert got[True] == got[False]
    assert growths[True] > 0
