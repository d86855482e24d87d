"""Captured decode steps stay valid: the static-buffer path (run eagerly on the CPU, as a captured
step would run) decodes exactly what the eager step decodes, with eviction, refill and row moves;
every tensor a captured step reads keeps its storage, or the cache of captured steps is empty."""

from __future__ import annotations

import pytest
from hf_oracle import make_requests, tiny_qwen2

from engine.decode.api import SegmentTimes
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig, LayerRange, make_policy
from engine.decode.loop_guard import LoopGuardConfig
from engine.decode.rows import RowTable
from engine.decode.runner import Runner
from engine.decode.sampling import DecodeMode
from engine.decode.slots import RowSlots
from engine.decode.work import Work

EVICTIONS = {
    "none": EvictionConfig("none"),
    "both-layers": EvictionConfig(
        "both",
        n_sink=1,
        output_window=4,
        speech_sink=2,
        speech_window=6,
        delay=2,
        speech_rate=1,
        layers=(LayerRange(1, 2, window=9),),
    ),
    "speech-follow": EvictionConfig(
        "speech-follow", speech_sink=1, speech_window=8, delay=3, speech_rate=1.5
    ),
    "speech-anchor": EvictionConfig("speech-anchor", speech_sink=2, look_back=3, look_ahead=5),
}


class EveryThird:
    """A stand-in timestamp reader: every token closes a segment, which starts at speech index
    (tokens read so far + token id mod 3) (the VibeVoice reader is tested on real text in
    tests/engine/vibevoice); each adds a word."""

    tokens_per_second = 7.5

    def __init__(self):
        self.seen = 0

    def feed(self, token_ids):
        found = []
        for t in token_ids:
            self.seen += 1
            found.append(SegmentTimes(self.seen + t % 3, words=1))
        return found


NO_LOOPS = LoopGuardConfig(enabled=False)


@pytest.fixture(scope="module")
def model():
    return tiny_qwen2()


def decode(model, requests, **config):
    decoder = MurmurDecoder(model, EngineConfig(loop=NO_LOOPS, **config), speech_anchor=EveryThird)
    return {r.id: r.token_ids for r in decoder.decode(requests)}


@pytest.fixture
def checked(monkeypatch):
    """Asserts the graph contract after every step, admission and row move of every runner."""
    seen: list[tuple[int, int]] = []  # (captured steps, transfer buffers) after each call

    def wrap(name):
        original = getattr(Runner, name)

        def call(self, *args, **kwargs):
            out = original(self, *args, **kwargs)
            if self.graphs is not None:
                assert self.graphs.contract_holds(), f"a captured step's input moved after {name}"
                seen.append((len(self.graphs.graphs), len(self.graphs._transfers)))
            return out

        monkeypatch.setattr(Runner, name, call)

    for name in ("launch", "admit", "move_row", "reserve"):
        wrap(name)
    return seen


@pytest.mark.parametrize("name", list(EVICTIONS))
def test_captured_steps_decode_what_eager_steps_decode_through_refill_and_eviction(model, checked, name):
    eviction = EVICTIONS[name]
    requests = make_requests([40, 47, 35, 52, 30], [30, 12, 30, 20, 30])
    eager = decode(model, requests, max_batch=3, eviction=eviction)
    graphed = decode(model, requests, max_batch=3, eviction=eviction, emulate_graphs=True)
    assert graphed == eager
    assert max(graphs for graphs, _ in checked) >= 2  # several row buckets, kept across refills
    moves_entries = name != "none"  # holes filled after drops, speech brought back
    assert (max(buffers for _, buffers in checked) > 0) == moves_entries  # inside the captured step


def admitted(model, rows: int, lengths: list[int]):
    """A runner with captured steps (emulated) and `lengths` requests admitted, and its row table."""
    config = EngineConfig(max_batch=rows, loop=NO_LOOPS, emulate_graphs=True)
    decoder = MurmurDecoder(model, config)
    requests = make_requests(lengths, 10)
    policy, layers = make_policy(config.eviction), len(decoder.parts.layers)
    layouts = [policy.layout(r.prompt_length, r.speech_span, r.max_new_tokens, layers) for r in requests]
    runner = Runner(decoder.parts, decoder.fused, config, rows, layouts[0].layer_group)
    table = RowTable(rows)
    runner.reserve(layouts)
    for request, layout in zip(requests, layouts, strict=True):
        work = Work(request, DecodeMode())
        slots = RowSlots(layout, 0)
        runner.admit(table.n, work, layout, slots.held)
        table.occupy(work, slots, [], unread=True)
    return runner, table


def test_reallocating_the_store_empties_the_cache_of_captured_steps(model):
    runner, table = admitted(model, 2, [40, 47])
    runner.launch(table.plan()).read()
    assert runner.graphs is not None and runner.graphs.graphs and runner.graphs.contract_holds()
    runner.store.ensure(runner.store.capacity + 1)  # grows: new buffers
    assert runner.graphs.graphs == {} and runner.graphs.contract_holds()
    runner.launch(table.plan()).read()  # captured again over the new buffers
    assert runner.graphs.graphs and runner.graphs.contract_holds()


def test_a_captured_step_whose_inputs_were_swapped_behind_its_back_refuses_to_replay(model):
    runner, table = admitted(model, 2, [40, 47])
    runner.launch(table.plan()).read()
    runner.store.offsets = runner.store.offsets.clone()  # reallocated without a new generation
    assert runner.graphs is not None and not runner.graphs.contract_holds()
    with pytest.raises(RuntimeError, match="reallocated: offsets"):
        runner.launch(table.plan())
