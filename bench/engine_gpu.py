"""Murmur's decode engine on a GPU: step time, tokens/s, attention share and the bandwidth roofline.

A Qwen2.5-7B-shaped model with random bf16 weights decodes 300 s chunk shapes (60 system + 2,250
speech + 40 system prompt tokens, 2,700 decode steps) at batch 16 and 64, once per eviction policy
(the paper's presets), and HF `generate` runs the same prompts for `--hf-steps` steps. For each row:
decode ms/step, tokens/s, the share of the step spent in attention (timed alone at the run's mean
visible KV length), and the roofline: (weights + mean visible KV bytes) / HBM bandwidth, with the
bandwidth measured by a device copy. A bf16 check reports token agreement and first divergence vs
HF `generate`. Without CUDA it prints why and exits 0; `--dry-run` runs every piece at toy shapes
(CPU is fine) in seconds.

    .venv/bin/python bench/engine_gpu.py              # one H100/H200, under 10 minutes
    .venv/bin/python bench/engine_gpu.py --dry-run    # anywhere
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM
from transformers.models.qwen2.modeling_qwen2 import Qwen2RotaryEmbedding

from engine.decode.api import DecodeRequest
from engine.decode.attention import make_attention
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import PRESETS, EvictionConfig
from engine.decode.loop_guard import LoopGuardConfig
from engine.decode.step import ModelParts


@dataclass(frozen=True)
class Setup:
    model: dict[str, int]
    prompt: tuple[int, int, int]  # system, speech, system
    steps: int
    hf_steps: int
    batches: tuple[int, ...]
    policies: dict[str, EvictionConfig]


PAPER = ("paper-output", "paper-speech", "paper-both")
FULL = Setup(
    model=dict(
        hidden_size=3584,
        intermediate_size=18944,
        num_hidden_layers=28,
        num_attention_heads=28,
        num_key_value_heads=4,
        vocab_size=152064,
    ),
    prompt=(60, 2250, 40),
    steps=2700,
    hf_steps=256,
    batches=(16, 64),
    policies={"none": EvictionConfig("none"), **{k: PRESETS[k] for k in PAPER}},
)
DRY = Setup(
    model=dict(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=512,
    ),
    prompt=(6, 48, 4),
    steps=40,
    hf_steps=12,
    batches=(2, 4),
    policies={
        "none": EvictionConfig("none"),
        "output": EvictionConfig("output", n_sink=2, output_window=8),
        "speech": EvictionConfig("speech", speech_window=16, delay=4),
        "both": EvictionConfig("both", n_sink=2, output_window=8, speech_window=16, delay=4),
    },
)
HEADER = ("batch", "decoder", "prefill", "ms/step", "tok/s", "attn", "roof ms", "/roof", "KV vis", "vs HF")
NO_LOOPS = LoopGuardConfig(enabled=False)


def build_model(setup: Setup, device: torch.device, dtype: torch.dtype) -> Qwen2ForCausalLM:
    """Random weights, allocated directly on the device (no CPU copy of a 7B model)."""
    config = Qwen2Config(
        **setup.model, rope_theta=1e6, max_position_embeddings=32768, tie_word_embeddings=False
    )
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device("meta"):
            model = Qwen2ForCausalLM(config)
    finally:
        torch.set_default_dtype(default)
    model.to_empty(device=device)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.fill_(1.0) if "norm" in name else p.normal_(0.0, 0.02)
    model.model.rotary_emb = Qwen2RotaryEmbedding(config).to(device)  # its buffers were left empty
    return model.eval()


def requests(
    setup: Setup, count: int, dim: int, device: torch.device, dtype: torch.dtype, steps: int
) -> list:
    head, speech, tail = setup.prompt
    g = torch.Generator(device=device).manual_seed(0)
    total = head + speech + tail
    return [
        DecodeRequest(
            i, torch.randn(total, dim, generator=g, device=device, dtype=dtype), (head, head + speech), steps
        )
        for i in range(count)
    ]


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def run_engine(model, reqs: list, eviction: EvictionConfig, graphs: bool = True) -> tuple[float, float, list]:
    """(prefill seconds, decode seconds, results) of one engine run."""
    config = EngineConfig(max_batch=len(reqs), eviction=eviction, loop=NO_LOOPS, cuda_graphs=graphs)
    device = reqs[0].inputs_embeds.device
    sync(device)
    started = time.perf_counter()
    results = sorted(MurmurDecoder(model, config).decode(reqs), key=lambda r: r.id)
    total = time.perf_counter() - started
    prefill = sum(r.stats.prefill_seconds for r in results)
    return prefill, total - prefill, results


@torch.inference_mode()
def run_hf(model, reqs: list, steps: int) -> tuple[float, float, list[list[int]]]:
    embeds = torch.stack([r.inputs_embeds for r in reqs])
    kwargs = dict(inputs_embeds=embeds, do_sample=False, eos_token_id=None, pad_token_id=0)
    sync(embeds.device)
    started = time.perf_counter()
    model.generate(**kwargs, max_new_tokens=1)
    sync(embeds.device)
    prefill = time.perf_counter() - started
    started = time.perf_counter()
    out = model.generate(**kwargs, max_new_tokens=steps)
    sync(embeds.device)
    return prefill, time.perf_counter() - started - prefill, out.tolist()


def copy_bandwidth(device: torch.device) -> float:
    """Bytes/s of a large device-to-device copy (read + write)."""
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
    parts: ModelParts, rows: int, visible: int, device: torch.device, repeats: int = 20
) -> float:
    """Time of one step's attention over all layers at `visible` KV entries per row."""
    shape = parts.attention_shape
    attention = make_attention("auto", shape, device)
    k = torch.randn(rows, shape.kv_heads, visible, shape.head_dim, device=device, dtype=shape.dtype)
    q = torch.randn(rows, shape.q_heads, shape.head_dim, device=device, dtype=shape.dtype)
    attention.prepare(torch.full((rows,), visible, device=device), visible, False, visible)
    attention(q, k, k)
    sync(device)
    started = time.perf_counter()
    for _ in range(repeats * len(parts.layers)):
        attention(q, k, k)
    sync(device)
    return (time.perf_counter() - started) / repeats


def roofline_seconds(parts: ModelParts, rows: int, visible: float, bandwidth: float) -> float:
    shape = parts.attention_shape
    weights = sum(p.numel() for p in parts.backbone.layers.parameters()) + parts.lm_head.weight.numel()
    kv_token = 2 * len(parts.layers) * shape.kv_heads * shape.head_dim * parts.dtype.itemsize
    return (weights * parts.dtype.itemsize + rows * visible * kv_token) / bandwidth


def report(name, rows, steps, prefill, decode, visible, parts, bandwidth, hf_step=None) -> float:
    step = decode / max(steps - 1, 1)
    attn = attention_seconds(parts, rows, max(int(visible), 1), parts.device)
    roof = roofline_seconds(parts, rows, visible, bandwidth)
    vs_hf = f"{hf_step / step:6.1f}x" if hf_step else f"{'-':>7}"
    print(
        f"{rows:>5} {name:<22} {prefill:7.2f} {1000 * step:8.2f} {rows * steps / decode:8.0f} "
        f"{attn / step:6.0%} {1000 * roof:8.2f} {step / roof:6.2f} {visible:7.0f} {vs_hf}"
    )
    return step


def equivalence(model, setup: Setup, device, dtype, steps: int) -> None:
    reqs = requests(setup, 4, setup.model["hidden_size"], device, dtype, steps)
    _, _, ours = run_engine(model, reqs, EvictionConfig("none"))
    _, _, theirs = run_hf(model, reqs, steps)
    for r, row in zip(ours, theirs, strict=True):
        same = [a == b for a, b in zip(r.token_ids, row, strict=False)]
        first = same.index(False) if False in same else None
        print(f"  row {r.id}: {sum(same)}/{len(same)} tokens agree; first divergence: {first}")


def bench_batch(model, setup: Setup, rows: int, steps: int, hf_steps: int, bandwidth: float) -> None:
    """HF generate and the engine (graphs, eager) over `hf_steps`; then every policy over `steps`."""
    parts, device = ModelParts.from_model(model), model.device
    dim, dtype, prompt = setup.model["hidden_size"], parts.dtype, sum(setup.prompt)
    short = requests(setup, rows, dim, device, dtype, hf_steps)
    seen = prompt + hf_steps / 2  # mean KV entries a step reads without eviction
    prefill, decode, _ = run_hf(model, short, hf_steps)
    hf_step = report("HF generate", rows, hf_steps, prefill, decode, seen, parts, bandwidth)
    prefill, decode, _ = run_engine(model, short, EvictionConfig("none"))
    report("murmur (same steps)", rows, hf_steps, prefill, decode, seen, parts, bandwidth, hf_step)
    if device.type == "cuda":
        prefill, decode, _ = run_engine(model, short, EvictionConfig("none"), graphs=False)
        report("murmur eager (same)", rows, hf_steps, prefill, decode, seen, parts, bandwidth, hf_step)
    full = requests(setup, rows, dim, device, dtype, steps)
    for name, eviction in setup.policies.items():
        prefill, decode, results = run_engine(model, full, eviction)
        kept = results[0].stats.kv_kept_fraction or 1.0
        report(f"murmur {name}", rows, steps, prefill, decode, kept * (prompt + steps / 2), parts, bandwidth)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dry-run", action="store_true", help="toy shapes, any device, seconds")
    parser.add_argument("--steps", type=int, help="decode steps per chunk (default 2700)")
    parser.add_argument("--hf-steps", type=int, help="decode steps of the HF generate rows (default 256)")
    parser.add_argument("--batches", help="comma-separated batch sizes (default 16,64)")
    args = parser.parse_args()
    if not args.dry_run and not torch.cuda.is_available():
        print("engine_gpu: skipped, needs a CUDA GPU (use --dry-run to exercise it on the CPU)")
        return
    setup = DRY if args.dry_run else FULL
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    steps, hf_steps = args.steps or setup.steps, args.hf_steps or setup.hf_steps
    batches = tuple(int(b) for b in args.batches.split(",")) if args.batches else setup.batches
    model = build_model(setup, device, dtype)
    bandwidth = copy_bandwidth(device)
    name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
    print(f"device {device} ({name}), {dtype}; copy bandwidth {bandwidth / 1e9:.0f} GB/s")
    print(f"prompt {sum(setup.prompt)} tokens ({setup.prompt[1]} speech), {steps} decode steps")
    print("\n{:>5} {:<22} {:>7} {:>8} {:>8} {:>6} {:>8} {:>6} {:>7} {:>7}".format(*HEADER))
    for rows in batches:
        bench_batch(model, setup, rows, steps, hf_steps, bandwidth)
    print(f"\n{str(dtype).removeprefix('torch.')} check, engine vs HF generate, 4 rows, {hf_steps} steps:")
    equivalence(model, setup, device, dtype, hf_steps)


if __name__ == "__main__":
    main()
