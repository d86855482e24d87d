"""The device path does not hide its failures and does not wait on the host: compiled glue raises
out-of-memory and errors during a graph capture (and falls back only for a broken compiler); step
inputs reach the device through staging buffers that never alias a later step's inputs; with
attention that reads lengths, every row bucket is captured largest-first when the batch starts and
nothing is captured while decoding."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from hf_oracle import make_requests, tiny_qwen2

from engine.decode import fused
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig
from engine.decode.fused import _Compiled, rms_norm
from engine.decode.graphs import StepGraphs
from engine.decode.loop_guard import LoopGuardConfig
from engine.decode.staging import Staging

X, W = torch.randn(3, 8), torch.ones(8)


def failing(exc: Exception):
    def compiled(*args):
        raise exc

    return compiled


def test_a_broken_compiler_falls_back_to_the_plain_glue_with_a_warning():
    glue = _Compiled(rms_norm)
    glue.compiled = failing(RuntimeError("inductor: no working C compiler"))
    with pytest.warns(UserWarning, match="using the plain one"):
        out = glue(X, W, 1e-6)
    torch.testing.assert_close(out, rms_norm(X, W, 1e-6))
    assert glue.compiled is None


def test_out_of_memory_in_compiled_glue_is_raised_and_the_glue_stays_compiled():
    glue = _Compiled(rms_norm)
    glue.compiled = failing(torch.OutOfMemoryError("CUDA out of memory"))
    with pytest.raises(torch.OutOfMemoryError):
        glue(X, W, 1e-6)
    assert glue.compiled is not None


def test_an_error_while_capturing_a_graph_is_raised_not_swallowed(monkeypatch):
    monkeypatch.setattr(fused, "capturing", lambda: True)
    glue = _Compiled(rms_norm)
    glue.compiled = failing(RuntimeError("operation not permitted when stream is capturing"))
    with pytest.raises(RuntimeError, match="stream is capturing"):
        glue(X, W, 1e-6)
    assert glue.compiled is not None


def test_staged_inputs_equal_the_host_arrays_and_survive_later_puts():
    staging = Staging(torch.device("cpu"))
    first = staging.put([np.arange(6).reshape(2, 3), np.array([7])])
    staging.put([np.zeros((2, 3), dtype=np.int64), np.array([0])])
    staging.put([np.ones((2, 3), dtype=np.int64), np.array([1])])
    assert first[0].tolist() == [[0, 1, 2], [3, 4, 5]] and first[1].tolist() == [7]


@pytest.mark.gpu
def test_pinned_staging_alternates_and_never_overwrites_a_queued_copy():
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    staging = Staging(torch.device("cuda"))
    puts = [staging.put([np.full((4, 1000), i)])[0] for i in range(6)]
    assert [int(t.float().mean()) for t in puts] == list(range(6))
    assert staging._host[0].is_pinned() and staging._host[1].is_pinned()


@pytest.mark.skipif(
    os.environ.get("TRITON_INTERPRET") != "1", reason="split-kv on the CPU needs the interpreter"
)
@pytest.mark.parametrize(
    "eviction",
    [EvictionConfig("none"), EvictionConfig("output", n_sink=1, output_window=6)],
    ids=["none", "output"],
)
def test_row_buckets_are_captured_largest_first_at_batch_start_and_never_while_decoding(
    monkeypatch, eviction
):
    captured: list[tuple[int, int]] = []  # (row bucket, steps launched before the capture)
    launched = [0]
    capture, run = StepGraphs._capture, StepGraphs.run

    def record(self, key):
        captured.append((key.rows, launched[0]))
        return capture(self, key)

    def counted(self, *args, **kwargs):
        launched[0] += 1
        return run(self, *args, **kwargs)

    monkeypatch.setattr(StepGraphs, "_capture", record)
    monkeypatch.setattr(StepGraphs, "run", counted)
    model = tiny_qwen2(dtype=torch.float32)
    requests = [
        type(r)(r.id, r.inputs_embeds.float(), r.speech_span, r.max_new_tokens)
        for r in make_requests([40, 47, 35, 52, 30, 33], [12, 4, 12, 8, 12, 6])
    ]
    config = EngineConfig(
        loop=LoopGuardConfig(enabled=False),
        max_batch=5,
        attention="split-kv",
        emulate_graphs=True,
        eviction=eviction,
    )
    results = list(MurmurDecoder(model, config).decode(requests))
    assert len(results) == len(requests)
    assert [rows for rows, _ in captured] == [5, 4, 2, 1]  # every bucket of 5 rows, largest first
    assert all(steps == 0 for _, steps in captured)  # all before the first step
