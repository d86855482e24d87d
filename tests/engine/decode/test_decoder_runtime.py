"""Running the decoder: results stream out as rows finish, cancel stops between steps, the KV memory
budget decides how many rows run, and a row that outgrows it means a re-sized store whose rows
resume where they were and which grows back when memory allows (a typed error only when one row
does not fit)."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from hf_oracle import make_requests, tiny_qwen2

from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig
from engine.errors import Cancelled, OutOfMemoryError
from engine.types import FinishReason

ROW_BYTES = 2 * 2 * 2 * 16 * 8 * 128  # K and V, 2 layers, 2 KV heads, head 16, float64, 128 slots


@pytest.fixture(scope="module")
def model():
    return tiny_qwen2()


def test_results_stream_out_as_rows_finish_while_later_requests_wait(model):
    requests = make_requests([40, 47, 35, 52], [4, 30, 30, 30])
    pulled: list[int] = []

    def lazily():
        for r in requests:
            pulled.append(r.id)
            yield r

    stream = MurmurDecoder(model, EngineConfig(max_batch=2)).decode(lazily())
    first = next(stream)
    assert first.id == 0 and first.finish_reason == FinishReason.LENGTH
    assert pulled == [0, 1]  # the short request finished before the last two were even read
    rest = list(stream)
    assert sorted(r.id for r in rest) == [1, 2, 3]


def test_cancel_stops_between_steps(model):
    cancel = threading.Event()
    stream = MurmurDecoder(model, EngineConfig(max_batch=2)).decode(
        make_requests([40, 47, 35], [4, 30, 30]), cancel
    )
    next(stream)
    cancel.set()
    with pytest.raises(Cancelled):
        next(stream)


def test_cancel_before_the_start_decodes_nothing(model):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        list(MurmurDecoder(model).decode(make_requests([40], 10), cancel))


def test_out_of_memory_retries_with_a_smaller_batch_and_loses_nothing(model):
    requests = make_requests([40, 47, 35, 52, 30], 30)
    expected = {r.id: r.token_ids for r in MurmurDecoder(model, EngineConfig(max_batch=4)).decode(requests)}
    tight = EngineConfig(max_batch=4, kv_memory_limit=2 * ROW_BYTES + 1)  # two rows fit, four do not
    got = {r.id: r.token_ids for r in MurmurDecoder(model, tight).decode(requests)}
    assert got == expected


SLOT_BYTES = 2 * 2 * 2 * 16 * 8  # one slot of one row: K and V, 2 layers, 2 KV heads, head 16, float64
LIMIT = 3 * 192 * SLOT_BYTES  # 4 rows of 128 slots fit, 4 rows of 192 do not, 2 rows of 192 do


def record_prefixes(monkeypatch) -> list[int]:
    """Lengths of the outputs every admission resumed after (0: a fresh start)."""
    import engine.decode.runner as runner

    prefixes: list[int] = []
    original = runner.prefill

    def spy(parts, embeds, prefix=()):
        prefixes.append(len(prefix))
        return original(parts, embeds, prefix)

    monkeypatch.setattr(runner, "prefill", spy)
    return prefixes


def test_out_of_memory_mid_decode_resumes_rows_after_their_tokens(model, monkeypatch):
    # four short rows fill the store; the long fifth one does not fit it, nor does a store of
    # four long rows fit the memory: the batch halves and the short rows resume where they were
    requests = make_requests([30, 32, 34, 36, 120], [8, 30, 30, 30, 30])
    expected = {r.id: r.token_ids for r in MurmurDecoder(model, EngineConfig(max_batch=4)).decode(requests)}
    prefixes = record_prefixes(monkeypatch)
    decoder = MurmurDecoder(model, EngineConfig(max_batch=4, kv_memory_limit=LIMIT))
    got = {r.id: r.token_ids for r in decoder.decode(requests)}
    assert got == expected
    assert decoder.stats.batches[:2] == [4, 3]  # four short rows, then three rows of the long one's size
    assert sorted(p for p in prefixes if p)[:3] == [8, 8, 8]  # three rows resumed after 8 tokens


def test_a_failed_store_is_gone_before_the_next_one_is_allocated(model, monkeypatch):
    import weakref

    from engine.decode.kv_store import KVStore

    stores: list[weakref.ref] = []
    alive: list[int] = []
    allocate = KVStore.allocate

    def spy(self, capacity, speech_capacity=0, rows=None):
        alive.append(sum(ref() is not None for ref in stores))  # earlier stores still referenced
        stores.append(weakref.ref(self))
        return allocate(self, capacity, speech_capacity, rows)

    monkeypatch.setattr(KVStore, "allocate", spy)
    requests = make_requests([30, 32, 34, 36, 120], [8, 30, 30, 30, 30])
    list(MurmurDecoder(model, EngineConfig(max_batch=4, kv_memory_limit=LIMIT)).decode(requests))
    assert len(alive) >= 2 and not any(alive)  # re-sized, never two stores at once


def test_a_budget_limited_batch_grows_back_once_the_rows_in_flight_fit(model):
    requests = make_requests([120, 30, 31, 32, 33, 34, 35, 36], 40)
    expected = {r.id: r.token_ids for r in MurmurDecoder(model, EngineConfig(max_batch=4)).decode(requests)}
    decoder = MurmurDecoder(model, EngineConfig(max_batch=4, kv_memory_limit=LIMIT))
    got = {r.id: r.token_ids for r in decoder.decode(requests)}
    assert got == expected
    assert decoder.stats.batches[0] == 3  # three rows of the long request's size fit the budget
    assert decoder.stats.batches[-1] == 4


def test_out_of_memory_with_a_single_row_is_a_typed_error(model):
    tiny = EngineConfig(max_batch=4, kv_memory_limit=ROW_BYTES // 2)
    with pytest.raises(OutOfMemoryError, match="ran out of memory"):
        list(MurmurDecoder(model, tiny).decode(make_requests([40], 30)))


def test_config_rejects_nonsense():
    with pytest.raises(ValueError, match="attention backend"):
        EngineConfig(attention="magic")
    with pytest.raises(ValueError):
        EngineConfig(max_batch=0)
    with pytest.raises(ValueError):
        EngineConfig(repetition_penalty=0.0)


def test_eviction_options_resolve_like_the_command_line():
    both = EvictionConfig.from_options("both", n_sink=8, output_window=256, speech_window=512)
    config = EngineConfig(eviction=both)
    kept = config.eviction
    assert (kept.n_sink, kept.output_window, kept.speech_window) == (8, 256, 512)
    assert EvictionConfig.from_options("output", window=64).output_window == 64
    assert EvictionConfig.from_options("paper-speech", window=1538).speech_window == 1538
    with pytest.raises(ValueError, match="`both` has an output and a speech window"):
        EvictionConfig.from_options("both", window=512)  # never both windows silently
    assert (config.eviction.delay, config.eviction.speech_sink) == (32, 32)  # the authors' defaults
    assert replace(config, max_batch=4).eviction == config.eviction
    with pytest.raises(ValueError, match="unknown eviction policy"):
        EvictionConfig.from_options("sometimes")
    with pytest.raises(ValueError, match="must be an EvictionConfig"):
        EngineConfig(eviction="paper-speech")  # a name is resolved once, by the option table


def test_the_kv_memory_budget_not_a_fixed_batch_of_16_decides_how_many_rows_run(model):
    requests = make_requests([30 + i % 7 for i in range(40)], 6)  # many short chunks
    expected = {r.id: r.token_ids for r in MurmurDecoder(model, EngineConfig(max_batch=4)).decode(requests)}
    decoder = MurmurDecoder(model, EngineConfig(kv_memory_limit=1 << 30))  # a large --kv-memory
    assert {r.id: r.token_ids for r in decoder.decode(requests)} == expected
    assert decoder.stats.batches == [40] and decoder.stats.row_steps / decoder.stats.steps > 16
    capped = MurmurDecoder(model, EngineConfig(max_batch=8, kv_memory_limit=1 << 30))  # --batch-size 8
    list(capped.decode(requests))
    assert capped.stats.batches == [8]
    unbudgeted = MurmurDecoder(model, EngineConfig())  # the CPU without a budget: 16 rows
    list(unbudgeted.decode(requests))
    assert unbudgeted.stats.batches == [16]


def test_the_vibevoice_backend_leaves_the_row_limit_to_the_budget_unless_a_batch_size_is_given(model):
    from engine.backends.vibevoice.config import VibeVoiceConfig
    from engine.backends.vibevoice.decoders import create_decoder

    def limit(**options):
        config = VibeVoiceConfig(decode=EngineConfig(kv_memory_limit=1 << 30), **options)
        built = create_decoder(
            "murmur", model, max_batch=config.batch_size, eos_token_ids=(), segment_boundary=None,
            options=config.decoder_options,
        )  # fmt: skip
        return built.config.max_batch

    assert limit() == 1024 and limit(batch_size=12) == 12
