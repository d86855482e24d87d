"""Evicted tokens become batch capacity: at the same KV bytes the engine admits more rows of a
policy that keeps less, an anchored row that keeps more than planned makes room (in place, or in a
re-sized store) without changing a token, a row without timestamps that outgrows the budget costs
only itself, and a setting that drops untranscribed speech warns."""

from __future__ import annotations

import warnings

import pytest
from hf_oracle import make_requests, tiny_qwen2

from engine.decode.admission import rows_within
from engine.decode.api import SegmentTimes
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import PRESETS, EvictionConfig, make_policy
from engine.decode.kv_store import KVStore, round_up
from engine.decode.loop_guard import LoopGuardConfig
from engine.decode.sampling import DecodeMode
from engine.decode.work import WorkQueue

SPEECH, NEW = 120, 150
PROMPT = 4 + SPEECH + 5
# `EvenReply` closes a segment of 4 speech tokens (5 output tokens) at a time: rows are planned for it
ANCHOR = EvictionConfig("speech-anchor", speech_sink=2, look_back=4, look_ahead=12, turn_tokens=4)
SLOT_BYTES = 2 * 2 * 2 * 16 * 8  # K and V, 2 layers, 2 KV heads, head 16, float64
NO_LOOPS = LoopGuardConfig(enabled=False)


class EvenReply:
    """A segment of 3 words every 5 tokens, its Start following the speech evenly over the budget."""

    tokens_per_second = 7.5

    def __init__(self):
        self.read = 0

    def feed(self, token_ids):
        out = []
        for _ in token_ids:
            self.read += 1
            if self.read % 5 == 0:
                out.append(SegmentTimes(SPEECH * (self.read - 5) / NEW, words=3))
        return out


class Silent:
    tokens_per_second = 7.5

    def feed(self, token_ids):
        return []


@pytest.fixture(scope="module")
def model():
    return tiny_qwen2()


def store_slots(config: EvictionConfig) -> int:
    layout = make_policy(config).layout(PROMPT, (4, 4 + SPEECH), NEW, 2)
    return round_up(layout.capacity + 2, 64)  # + the fed token's room and the scratch slot


def decode(model, eviction, count, budget, anchor=EvenReply):
    policy = EvictionConfig.named(eviction) if isinstance(eviction, str) else eviction
    config = EngineConfig(max_batch=count, eviction=policy, kv_memory_limit=budget, loop=NO_LOOPS)
    decoder = MurmurDecoder(model, config, speech_anchor=anchor)
    results = {r.id: r for r in decoder.decode(make_requests([PROMPT] * count, NEW))}
    return decoder, results


def test_at_equal_kv_bytes_speech_anchor_admits_at_least_a_quarter_more_rows_than_none(model):
    budget = 4 * store_slots(EvictionConfig("none")) * SLOT_BYTES
    none, _ = decode(model, "none", 7, budget)
    anchored, results = decode(model, ANCHOR, 7, budget)
    assert none.stats.batches[0] == 4
    assert anchored.stats.batches[0] == rows_within(budget, store_slots(ANCHOR) * SLOT_BYTES)
    assert anchored.stats.batches[0] >= 1.25 * none.stats.batches[0]
    assert all(len(r.token_ids) == NEW and r.stats.speech_lost_fraction == 0.0 for r in results.values())
    assert max(r.stats.kv_kept_last for r in results.values()) < 0.8  # it did evict


def test_an_anchored_row_that_keeps_more_than_planned_grows_the_store_in_place(model, monkeypatch):
    grown: list[int] = []
    ensure = KVStore.ensure

    def spy(self, capacity, speech_capacity=0):
        if capacity > self.capacity:
            grown.append(capacity)
        return ensure(self, capacity, speech_capacity)

    monkeypatch.setattr(KVStore, "ensure", spy)
    _, plain = decode(model, "none", 2, None)
    decoder, silent = decode(model, ANCHOR, 2, None, anchor=Silent)  # no timestamps: nothing evicted
    assert {i: r.token_ids for i, r in silent.items()} == {i: r.token_ids for i, r in plain.items()}
    assert grown and decoder.stats.batches == [2]  # grown between steps, never re-sized
    assert all(r.stats.kv_kept_last == 1.0 for r in silent.values())


def test_when_the_budget_cannot_grow_the_rows_resume_in_a_store_of_fewer_longer_rows(model):
    budget = 3 * store_slots(ANCHOR) * SLOT_BYTES  # three planned rows; two full rows do not fit
    _, plain = decode(model, "none", 3, None)
    decoder, silent = decode(model, ANCHOR, 3, budget, anchor=Silent)
    assert {i: r.token_ids for i, r in silent.items()} == {i: r.token_ids for i, r in plain.items()}
    assert decoder.stats.batches[0] == 3 and min(decoder.stats.batches) == 1


def test_a_setting_expected_to_drop_untranscribed_speech_warns_once_and_speech_anchor_does_not(model):
    with pytest.warns(UserWarning, match=r"evict about 34 % of a 300 s chunk's speech before the transcript"):
        MurmurDecoder(model, EngineConfig(eviction=PRESETS["paper-speech"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MurmurDecoder(model, EngineConfig(eviction=EvictionConfig.named("speech-anchor")))
        MurmurDecoder(model, EngineConfig(eviction=PRESETS["paper-output"]))


def test_kv_memory_reaches_the_engine_and_kv_plan_counts_rows_in_it(capsys):
    from engine.cli import main
    from engine.option_values import memory_size
    from engine.recipe import recipe_from

    assert memory_size("8GiB") == 8 * 2**30 and memory_size("500MB") == 500 * 10**6
    assert memory_size("64") == 64
    recipe = recipe_from({"eviction": "speech-anchor", "kv_memory_limit": "2GiB"}, "vibevoice")
    assert EngineConfig(**recipe.backend_config.decoder_options).kv_memory_limit == 2 * 2**30
    assert main(["kv-plan", "--kv-memory", "40GiB", "--eviction", "none", "speech-anchor"]) == 0
    table = capsys.readouterr().out.split("\n\n")[0].splitlines()
    assert table[1].endswith("| rows in 40.00 GiB |")
    none, anchored = (int(line.split("|")[-2]) for line in table[3:5])
    assert none == 40 * 2**30 // ((2350 + 2700) * 28 * 2 * 4 * 128 * 2) and anchored >= 1.25 * none
    with pytest.raises(SystemExit) as exit_code:
        main(["kv-plan", "--kv-memory", "lots"])
    assert exit_code.value.code == 2 and "not a memory size: 'lots'" in capsys.readouterr().err


class SilentAfter(EvenReply):
    """`EvenReply`, except for the row whose first output token is `bad`: its reply has no timestamps."""

    bad = -1

    def __init__(self):
        super().__init__()
        self.first: int | None = None

    def feed(self, token_ids):
        self.first = int(token_ids[0]) if self.first is None else self.first
        segments = super().feed(token_ids)
        return [] if self.first == self.bad else segments


def one_silent_row(model, monkeypatch, count: int):
    """The request (of `count`) whose reply, alone, writes no times (the first whose first token is
    its own), and every request's output under `none`."""
    _, plain = decode(model, "none", count, None)
    firsts = [plain[i].token_ids[0] for i in range(count)]
    bad = next(i for i, first in enumerate(firsts) if firsts.count(first) == 1)
    monkeypatch.setattr(SilentAfter, "bad", firsts[bad])
    return bad, plain


def record_prefills(monkeypatch, requests) -> list[int]:
    """The request of every prefill, in order."""
    import engine.decode.runner as runner

    prefilled: list[int] = []
    prefill, ids = runner.prefill, {id(r.inputs_embeds): r.id for r in requests}

    def counted(parts, embeds, prefix=()):
        prefilled.append(ids[id(embeds)])
        return prefill(parts, embeds, prefix)

    monkeypatch.setattr(runner, "prefill", counted)
    return prefilled


def test_a_row_without_timestamps_costs_only_itself_the_other_rows_are_prefilled_once(model, monkeypatch):
    count = 6
    requests = make_requests([PROMPT] * count, NEW)
    bad, plain = one_silent_row(model, monkeypatch, count)
    budget = count * store_slots(ANCHOR) * SLOT_BYTES  # the planned rows exactly: the store cannot grow
    config = EngineConfig(max_batch=count, eviction=ANCHOR, kv_memory_limit=budget, loop=NO_LOOPS)
    others = [r for r in requests if r.id != bad]
    alone = {r.id: r.token_ids for r in MurmurDecoder(model, config, speech_anchor=EvenReply).decode(others)}
    prefilled = record_prefills(monkeypatch, requests)
    decoder = MurmurDecoder(model, config, speech_anchor=SilentAfter)
    results = {r.id: r for r in decoder.decode(requests)}
    assert {i: r.token_ids for i, r in results.items() if i != bad} == alone
    assert results[bad].token_ids == plain[bad].token_ids and results[bad].stats.kv_kept_last == 1.0
    assert sorted(prefilled) == sorted([*range(count), bad])  # the others once; the bad row again, alone
    assert decoder.stats.batches[0] == count  # never re-sized for the others
    assert max(r.stats.kv_kept_last for i, r in results.items() if i != bad) < 0.8  # the others evicted


class SharedSource:
    """A long-lived queue that many jobs feed (as `murmur serve`'s): the same requests in order, not a
    local `WorkQueue`."""

    def __init__(self, requests):
        self.queue = WorkQueue(requests, DecodeMode())

    def pop(self):
        return self.queue.pop()

    def poll(self):
        return self.queue.poll()

    def waiting(self):
        return self.queue.waiting()

    def push_front(self, works):
        self.queue.push_front(works)

    def cancelled(self, request_id):
        return False


def test_a_shared_queue_holds_new_work_back_until_the_row_without_timestamps_has_resumed(model, monkeypatch):
    count = 6
    requests = make_requests([PROMPT] * (count + 2), NEW)
    bad, _ = one_silent_row(model, monkeypatch, count + 2)
    budget = count * store_slots(ANCHOR) * SLOT_BYTES
    config = EngineConfig(max_batch=count, eviction=ANCHOR, kv_memory_limit=budget, loop=NO_LOOPS)
    prefilled = record_prefills(monkeypatch, requests)
    results = list(MurmurDecoder(model, config, speech_anchor=SilentAfter).decode(SharedSource(requests)))
    assert sorted(r.id for r in results) == list(range(count + 2))
    again = prefilled.index(bad, prefilled.index(bad) + 1)
    assert again < prefilled.index(count) < prefilled.index(count + 1)  # it cannot starve behind them
