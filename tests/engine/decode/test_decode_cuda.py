"""On CUDA: the engine (CUDA graphs on and off, every available attention backend) decodes what HF
`generate` decodes. float32 with TF32 off keeps the tiny model's greedy choices exact; in bf16 one
flipped near-tie changes the rest of a row, so bf16 kernels are compared by relative error
(test_attention_backends.py, bench/gpu_kernel_check.py), not by tokens."""

from __future__ import annotations

import pytest
import torch
from gpu_parts import Lagging
from hf_oracle import hf_generate, make_requests, tiny_qwen2

from engine.decode.attention import available
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig
from engine.decode.loop_guard import LoopGuardConfig

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
]
BOTH = EvictionConfig("both", n_sink=1, output_window=4, speech_window=6, delay=2, speech_rate=1.0)


@pytest.fixture(scope="module")
def model():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return tiny_qwen2(dtype=torch.float32).cuda()


def cuda_requests(lengths, budget):
    return [
        type(r)(r.id, r.inputs_embeds.float().cuda(), r.speech_span, r.max_new_tokens)
        for r in make_requests(lengths, budget)
    ]


def decode(model, requests, **config):
    engine = MurmurDecoder(model, EngineConfig(loop=LoopGuardConfig(enabled=False), **config))
    return {r.id: r.token_ids for r in engine.decode(requests)}


@pytest.mark.parametrize("attention", ["sdpa", "split-kv"])
@pytest.mark.parametrize("graphs", [True, False], ids=["graphs", "eager"])
def test_cuda_engine_matches_hf_generate(model, graphs, attention):
    if not available(attention, torch.device("cuda"), torch.float32):
        pytest.skip(f"{attention} is not installed")
    requests = cuda_requests([40, 47, 35, 52], 30)
    got = decode(model, requests, max_batch=3, cuda_graphs=graphs, attention=attention)
    for request in requests:
        assert got[request.id] == hf_generate(model, request)


def test_graph_replay_equals_eager_steps_with_eviction_and_refill(model):
    requests = cuda_requests([40, 47, 35, 52, 30], [30, 12, 30, 20, 30])
    eager = decode(model, requests, max_batch=2, eviction=BOTH, cuda_graphs=False)
    assert decode(model, requests, max_batch=2, eviction=BOTH, cuda_graphs=True) == eager


def test_a_store_growing_under_captured_steps_decodes_what_eager_decodes(model):
    """The store grows in place mid-decode; the captured steps are dropped and captured again into
    a new memory pool (joining the released one fails inside CUDA's allocator)."""
    anchor = EvictionConfig("speech-anchor", speech_sink=2, look_back=3, look_ahead=5, turn_tokens=0)
    requests = cuda_requests([40, 47, 35, 52, 30], [24, 12, 24, 18, 24])
    got, growths = {}, {}
    for graphs in (False, True):
        config = EngineConfig(
            loop=LoopGuardConfig(enabled=False), max_batch=3, eviction=anchor, kv_slots=1, cuda_graphs=graphs
        )
        decoder = MurmurDecoder(model, config, speech_anchor=Lagging)
        got[graphs] = {r.id: r.token_ids for r in decoder.decode(requests)}
        growths[graphs] = decoder.stats.growths
    assert got[True] == got[False]
    assert growths[True] > 0


@pytest.mark.parametrize("name", ["flash-attn", "flashinfer"])
def test_flash_backends_agree_with_sdpa_in_bf16(name):
    if not available(name, torch.device("cuda"), torch.bfloat16):
        pytest.skip(f"{name} is not installed")
    model = tiny_qwen2(dtype=torch.bfloat16).cuda()
    requests = [
        type(r)(r.id, r.inputs_embeds.bfloat16().cuda(), r.speech_span, r.max_new_tokens)
        for r in make_requests([40, 47], 24)
    ]
    sdpa = decode(model, requests, attention="sdpa")
    other = decode(model, requests, attention=name)
    agree = sum(a == b for i in sdpa for a, b in zip(sdpa[i], other[i], strict=True))
    assert agree >= 0.9 * sum(len(t) for t in sdpa.values())


def test_captured_inputs_keep_their_storage_on_cuda(model, monkeypatch):
    from engine.decode.runner import Runner

    launch, checked = Runner.launch, []

    def checked_launch(self, plan):
        out = launch(self, plan)
        assert self.graphs is not None and self.graphs.contract_holds()
        checked.append(len(self.graphs.graphs))
        return out

    monkeypatch.setattr(Runner, "launch", checked_launch)
    requests = cuda_requests([40, 47, 35, 52, 30], [30, 12, 30, 20, 30])
    decode(model, requests, max_batch=2, eviction=BOTH, cuda_graphs=True)
    assert checked and max(checked) >= 1


def test_captures_in_a_worker_thread_survive_cuda_work_in_another_thread(model):
    """The app decodes in a worker thread; thread_local capture lets the GUI thread use CUDA meanwhile."""
    import threading

    requests = cuda_requests([40, 47, 35], [24, 24, 24])
    expected = decode(model, requests, max_batch=3, cuda_graphs=False)
    got: dict = {}
    worker = threading.Thread(
        target=lambda: got.update(decode(model, requests, max_batch=3, cuda_graphs=True))
    )
    worker.start()
    while worker.is_alive():
        torch.ones(1024, device="cuda").sum().item()  # another thread's CUDA calls during the captures
    worker.join()
    assert got == expected
