"""Pieces of `bench/gpu_check.py`: random models and chunks, teacher-forced logits, the roofline.

Everything here runs on CUDA or, at toy shapes, on the CPU (the check's dry run).
"""

from __future__ import annotations

import importlib.util
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import transformers
from transformers import Qwen2Config, Qwen2ForCausalLM
from transformers.models.qwen2.modeling_qwen2 import Qwen2RotaryEmbedding

from engine.decode.api import DecodeRequest, SegmentTimes
from engine.decode.attention import make_attention
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig, make_policy
from engine.decode.graphs import LENGTH_BUCKET
from engine.decode.loop_guard import LoopGuardConfig
from engine.decode.rows import RowTable
from engine.decode.runner import Runner
from engine.decode.sampling import DecodeMode
from engine.decode.slots import RowSlots
from engine.decode.step import ModelParts
from engine.decode.work import Work

NO_LOOPS = LoopGuardConfig(enabled=False)


@dataclass(frozen=True)
class Setup:
    model: dict[str, int]
    prompt: tuple[int, int, int]  # system, speech, system tokens
    steps: int  # decode steps of the policy rows
    hf_steps: int  # decode steps of the HF rows (and the engine rows compared with them)
    batches: tuple[int, ...]
    policies: dict[str, EvictionConfig]
    forced: int  # teacher-forced steps of the logits check


class Lagging:
    """A timestamp reader whose every token closes a one-word segment starting at a quarter of the
    tokens read: a `speech-anchor` row's anchor trails the plan, so the row keeps more entries than
    a store sized for the plan holds, and the store grows while decoding."""

    tokens_per_second = 7.5

    def __init__(self) -> None:
        self.seen = 0

    def feed(self, token_ids):
        self.seen += len(token_ids)
        return [SegmentTimes(float(self.seen // 4), words=1) for _ in token_ids]


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def build_model(dims: dict[str, int], device: torch.device, dtype: torch.dtype, std: float = 0.02):
    """A random Qwen2 allocated directly on the device (no CPU copy of a 7B model)."""
    config = Qwen2Config(**dims, rope_theta=1e6, max_position_embeddings=32768, tie_word_embeddings=False)
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device("meta"):
            model = Qwen2ForCausalLM(config)
    finally:
        torch.set_default_dtype(default)
    model.to_empty(device=device)
    g = torch.Generator(device=device).manual_seed(0)  # not the default: a failed capture can break it
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.fill_(1.0) if "norm" in name else p.normal_(0.0, std, generator=g)
    model.model.rotary_emb = Qwen2RotaryEmbedding(config).to(device)  # its buffers were left empty
    return model.eval()


def make_requests(
    model,
    lengths: list[int],
    budgets: int | list[int],
    device: torch.device,
    dtype: torch.dtype,
    prompt: tuple[int, int, int] | None = None,
) -> list[DecodeRequest]:
    """Random prompt embeddings: `prompt`'s system/speech/system split, or 4 + speech + 5 tokens."""
    g = torch.Generator(device=device).manual_seed(1)
    dim = model.config.hidden_size
    budgets = budgets if isinstance(budgets, list) else [budgets] * len(lengths)
    out = []
    for i, (length, budget) in enumerate(zip(lengths, budgets, strict=True)):
        span = (prompt[0], prompt[0] + prompt[1]) if prompt else (4, length - 5)
        embeds = torch.randn(length, dim, generator=g, device=device, dtype=dtype)
        out.append(DecodeRequest(i, embeds, span, budget))
    return out


@torch.inference_mode()
def forced_logits(
    model, requests: list[DecodeRequest], steps: int, config: EngineConfig, references=()
) -> list[torch.Tensor]:
    """Logits (n, steps, V) float32 of the engine, then of one HF forward of each of `references`
    (default: the model itself), all fed the same tokens."""
    decoder = MurmurDecoder(model, config)
    n, device = len(requests), decoder.parts.device
    policy, layers = make_policy(config.eviction), len(decoder.parts.layers)
    layouts = [policy.layout(r.prompt_length, r.speech_span, r.max_new_tokens, layers) for r in requests]
    runner = Runner(decoder.parts, decoder.fused, config, n, layouts[0].layer_group)
    table = RowTable(n)
    g = torch.Generator().manual_seed(3)
    forced = torch.randint(0, decoder.parts.vocab_size, (n, steps + 1), generator=g)
    runner.reserve(layouts)
    for row, (request, layout) in enumerate(zip(requests, layouts, strict=True)):
        work = Work(request, DecodeMode())
        slots = RowSlots(layout, 0)
        runner.admit(row, work, layout, slots.held)
        table.occupy(work, slots, [int(forced[row, 0])])
    seen: list[torch.Tensor] = []
    choose = runner.sampler.choose

    def record(logits: torch.Tensor, first: int, chosen: torch.Tensor) -> torch.Tensor:
        seen.append(logits.float().clone())
        return choose(logits, first, chosen)

    runner.sampler.choose = record  # type: ignore[method-assign]
    runner.last[:n] = forced[:, 0].to(device)
    for j in range(steps):
        runner.launch(table.plan()).read()
        runner.last[:n] = forced[:, j + 1].to(device)  # teacher forcing: feed the given token
    return [torch.stack(seen, dim=1)] + [
        hf_forced(reference, requests, forced[:, :steps].to(device)) for reference in references or (model,)
    ]


@torch.inference_mode()
def hf_forced(model, requests: list[DecodeRequest], forced: torch.Tensor) -> torch.Tensor:
    """Logits (n, steps, V) float32 of one HF forward per request over its prompt and `forced` (n, steps)."""
    out = []
    for row, request in enumerate(requests):
        fed = model.get_input_embeddings()(forced[row])
        inputs = torch.cat([request.inputs_embeds.to(fed.dtype), fed])[None]
        out.append(model(inputs_embeds=inputs, logits_to_keep=forced.shape[1]).logits[0].float())
    return torch.stack(out)


def copy_bandwidth(device: torch.device) -> float:
    """Bytes/s of a large device-to-device copy (read + write), after a warm-up copy."""
    size = (1 << 30) if device.type == "cuda" else (1 << 24)
    src = torch.empty(size, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)
    sync(device)
    started = time.perf_counter()
    for _ in range(10):
        dst.copy_(src)
    sync(device)
    return 2 * size * 10 / (time.perf_counter() - started)


@torch.inference_mode()
def attention_seconds(
    parts: ModelParts, rows: int, visible: float, device: torch.device, repeats: int = 20
) -> float:
    """One step's attention over all layers, as the captured step runs it: the engine's backend,
    its mask and length bucket, every layer its own keys and values, `visible` entries per row."""
    shape, layers = parts.attention_shape, len(parts.layers)
    attention = make_attention("auto", shape, device)
    seen = max(int(visible), 1)
    length = -(-seen // LENGTH_BUCKET) * LENGTH_BUCKET
    size = (layers, rows, shape.kv_heads, length, shape.head_dim)
    g = torch.Generator(device=device).manual_seed(2)
    k = torch.randn(size, generator=g, device=device, dtype=shape.dtype)
    v = torch.randn(size, generator=g, device=device, dtype=shape.dtype)
    q = torch.randn(rows, shape.q_heads, shape.head_dim, generator=g, device=device, dtype=shape.dtype)
    seqlen = torch.full((rows,), seen, device=device)
    attention.prepare(seqlen, length, True, length)

    def every_layer() -> None:
        for layer in range(layers):
            attention(q, k[layer], v[layer])

    every_layer()  # warm-up (compiles the kernel)
    run = replayed(every_layer, device)
    sync(device)
    started = time.perf_counter()
    for _ in range(repeats):
        run()
    sync(device)
    return (time.perf_counter() - started) / repeats


def replayed(work: Callable[[], None], device: torch.device) -> Callable[[], None]:
    """`work` as the captured step runs it: one CUDA graph replay (no Python launch cost per
    kernel, which eager timing of 28 layers' small kernels would measure instead); eager on CPU."""
    if device.type != "cuda":
        return work
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        work()
    return graph.replay


def roofline_seconds(parts: ModelParts, rows: int, visible: float, bandwidth: float) -> float:
    """Weights and the visible KV read once per step, at the measured copy bandwidth."""
    shape = parts.attention_shape
    weights = sum(p.numel() for p in parts.backbone.layers.parameters()) + parts.lm_head.weight.numel()
    kv_token = 2 * len(parts.layers) * shape.kv_heads * shape.head_dim * parts.dtype.itemsize
    return (weights * parts.dtype.itemsize + rows * visible * kv_token) / bandwidth


def engine_config(device: torch.device, graphs: bool, **kwargs) -> EngineConfig:
    cuda = device.type == "cuda"
    return EngineConfig(
        loop=NO_LOOPS, cuda_graphs=graphs and cuda, emulate_graphs=graphs and not cuda, **kwargs
    )


@torch.inference_mode()
def hf_step_seconds(model, requests, steps: int) -> tuple[float, float]:
    """(prefill seconds, seconds per decode step) of HF `generate`, warm."""
    embeds = torch.stack([r.inputs_embeds for r in requests])
    kwargs = dict(inputs_embeds=embeds, do_sample=False, eos_token_id=None, pad_token_id=0)

    def timed(tokens: int) -> float:
        sync(embeds.device)
        started = time.perf_counter()
        model.generate(**kwargs, max_new_tokens=tokens)
        sync(embeds.device)
        return time.perf_counter() - started

    timed(steps)  # warm-up as long as the timed run (a short one left batch 16 at 1.5x batch 64's step)
    one = timed(1)
    return one, (timed(steps) - one) / (steps - 1)


def engine_run(model, requests, eviction: EvictionConfig, graphs: bool) -> tuple[float, float, float, float]:
    """(prefill s, capture s, seconds per decode step, mean kept fraction) of one engine run."""
    device = requests[0].inputs_embeds.device
    config = engine_config(device, graphs, max_batch=len(requests), eviction=eviction)
    decoder = MurmurDecoder(model, config)
    sync(device)
    started = time.perf_counter()
    results = list(decoder.decode(requests))
    sync(device)
    total = time.perf_counter() - started
    prefill = sum(r.stats.prefill_seconds for r in results)
    decode_s = total - prefill - decoder.stats.capture_seconds
    kept = sum(r.stats.kv_kept_fraction or 1.0 for r in results) / len(results)
    return prefill, decoder.stats.capture_seconds, decode_s / max(decoder.stats.steps, 1), kept


def versions(device: torch.device) -> dict[str, str]:
    triton = "not installed"
    if importlib.util.find_spec("triton") is not None:
        try:
            import triton

            triton = triton.__version__
        except Exception as exc:  # a broken Triton is worth knowing, not worth a crash
            triton = f"broken ({type(exc).__name__})"
    cuda = torch.version.cuda or "none"
    name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu (dry run)"
    return {
        "python": platform.python_version(),
        "torch": f"{torch.__version__} (CUDA {cuda})",
        "transformers": transformers.__version__,
        "triton": triton,
        "numpy": np.__version__,
        "flash_attn": "installed" if importlib.util.find_spec("flash_attn") else "absent",
        "device": name,
    }
