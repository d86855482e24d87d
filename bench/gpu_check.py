"""One-command device check of Murmur's decode engine: correctness first, then speed vs the roofline.

Correctness (PASS/FAIL): (1) float32 engine tokens equal HF `generate` on a small random Qwen2
(TF32 off, CUDA graphs on); (2) identical tokens with graphs on and off, with eviction, refill and
row moves; (3) bf16 per-step logits of the engine against an HF forward under teacher forcing on
the Qwen2.5-7B shape (max abs difference, argmax agreement), not free-running divergence.
Speed, per batch: HF `generate`, the engine with graphs on and off over the same steps, then the
engine with each eviction policy over a whole 300 s chunk. Every timed region follows a warm-up;
decode ms/step excludes prefill and graph capture (reported separately). Attention is timed alone
with the kernel and the mask the engine's captured step uses, over distinct per-layer buffers (so
it is read from memory, not L2). The roofline is (weights + batch × mean visible KV bytes) over the
bandwidth of a 1 GiB device copy; the target at batch 16 is 1.3× the roofline.

    .venv/bin/python bench/gpu_check.py                  # one H100/H200, under 8 minutes
    .venv/bin/python bench/gpu_check.py --batches 16     # one batch size (or 64)
    .venv/bin/python bench/gpu_check.py --dry-run        # every path but CUDA, on the CPU, seconds

PASS/FAIL lines come first, then the table; the exit status is 1 when a check fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import torch
from gpu_parts import (
    Setup,
    attention_seconds,
    build_model,
    copy_bandwidth,
    forced_logits,
    make_requests,
    roofline_seconds,
    sync,
)

from engine.decode.attention import make_attention
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import PRESETS, EvictionConfig, LayerRange
from engine.decode.fused import rope
from engine.decode.loop_guard import LoopGuardConfig
from engine.decode.step import ModelParts

NO_LOOPS = LoopGuardConfig(enabled=False)
SMALL = dict(
    hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2
)
QWEN_7B = dict(
    hidden_size=3584,
    intermediate_size=18944,
    num_hidden_layers=28,
    num_attention_heads=28,
    num_key_value_heads=4,
    vocab_size=152064,
)
FULL = Setup(
    model=QWEN_7B,
    prompt=(60, 2250, 40),
    steps=2700,
    hf_steps=128,
    batches=(16, 64),
    policies={"none": EvictionConfig("none"), **{k: PRESETS[k] for k in ("paper-output", "paper-both")}},
    forced=32,
)
DRY = Setup(
    model={**SMALL, "vocab_size": 512},
    prompt=(6, 48, 4),
    steps=40,
    hf_steps=12,
    batches=(2, 4),
    policies={
        "none": EvictionConfig("none"),
        "both": EvictionConfig("both", n_sink=2, output_window=8, speech_window=16, delay=4),
    },
    forced=8,
)
BOTH_SMALL = EvictionConfig(  # both policies, and a second layer group with its own speech window
    "both",
    n_sink=1,
    output_window=4,
    speech_window=6,
    delay=2,
    speech_rate=1.0,
    layers=(LayerRange(1, 2, window=9),),
)
HEADER = ("batch", "decoder", "prefill s", "ms/step", "tok/s", "attn", "roof ms", "/roof", "KV vis", "vs HF")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def engine_config(device: torch.device, graphs: bool, **kwargs) -> EngineConfig:
    cuda = device.type == "cuda"
    return EngineConfig(
        loop=NO_LOOPS, cuda_graphs=graphs and cuda, emulate_graphs=graphs and not cuda, **kwargs
    )


def decode(model, requests, config: EngineConfig) -> tuple[dict[int, tuple[int, ...]], MurmurDecoder]:
    decoder = MurmurDecoder(model, config)
    return {r.id: r.token_ids for r in decoder.decode(requests)}, decoder


@torch.inference_mode()
def hf_tokens(model, request) -> tuple[int, ...]:
    out = model.generate(
        inputs_embeds=request.inputs_embeds[None],
        max_new_tokens=request.max_new_tokens,
        do_sample=False,
        eos_token_id=None,
        pad_token_id=0,
    )
    return tuple(out[0].tolist())


def check_small(device: torch.device) -> list[Check]:
    """Checks (1) and (2) on a small float32 model with large weights (no near-ties)."""
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    model = build_model({**SMALL, "vocab_size": 512}, device, torch.float32, std=0.2)
    requests = make_requests(model, [40, 47, 35, 52, 30], [24, 12, 24, 18, 24], device, torch.float32)
    got, _ = decode(model, requests, engine_config(device, True, max_batch=3))
    same = sum(got[r.id] == hf_tokens(model, r) for r in requests)
    first = Check(
        "float32 engine (graphs on) = HF generate", same == len(requests), f"{same}/{len(requests)} rows"
    )
    eager, _ = decode(model, requests, engine_config(device, False, max_batch=3, eviction=BOTH_SMALL))
    graphs, _ = decode(model, requests, engine_config(device, True, max_batch=3, eviction=BOTH_SMALL))
    equal = sum(eager[i] == graphs[i] for i in eager)
    second = Check(
        "graphs on = graphs off (eviction, refill)", equal == len(eager), f"{equal}/{len(eager)} rows"
    )
    return [first, second]


def check_forced(model, setup: Setup, device: torch.device, dtype: torch.dtype) -> Check:
    """Check (3): per-step logits under teacher forcing vs an HF forward over the same tokens."""
    requests = make_requests(model, [sum(setup.prompt)] * 4, setup.forced, device, dtype, setup.prompt)
    ours, theirs = forced_logits(model, requests, setup.forced, engine_config(device, True, max_batch=4))
    diff = (ours - theirs).abs().max().item()
    scale = theirs.abs().max().item()
    agree = (ours.argmax(-1) == theirs.argmax(-1)).float().mean().item()
    # bf16 rounding moves logits by a few % of their range and flips near-ties of random weights;
    # a wrong position, slot or mask moves them by their whole range and agrees by chance only
    ok = diff <= 0.10 * scale and agree >= 0.75
    name = f"{str(dtype).removeprefix('torch.')} teacher-forced logits vs HF forward"
    return Check(name, ok, f"max |diff| {diff:.4f} (max |logit| {scale:.2f}), argmax agreement {agree:.1%}")


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

    timed(2)  # warm-up
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


def speed(model, setup: Setup, rows: int, bandwidth: float, hf_steps: int, steps: int) -> list[str]:
    parts, device = ModelParts.from_model(model), model.device
    lines, prompt = [], sum(setup.prompt)

    def line(name: str, prefill: float, step: float, visible: float, hf: float | None) -> None:
        attn = attention_seconds(parts, rows, visible, device)
        roof = roofline_seconds(parts, rows, visible, bandwidth)
        vs = f"{hf / step:6.1f}x" if hf else f"{'-':>7}"
        lines.append(
            f"{rows:>5} {name:<26} {prefill:9.2f} {1000 * step:8.2f} {rows / step:8.0f} {attn / step:6.0%} "
            f"{1000 * roof:8.2f} {step / roof:6.2f} {visible:7.0f} {vs}"
        )
        progress(lines[-1])

    short = make_requests(model, [prompt] * rows, hf_steps, device, parts.dtype, setup.prompt)
    seen = prompt + hf_steps / 2
    hf_prefill, hf_step = hf_step_seconds(model, short, hf_steps)
    line("HF generate", hf_prefill, hf_step, seen, None)
    engine_run(model, short[:2], EvictionConfig("none"), True)  # warm-up: kernels, compiled glue
    for graphs in (True, False):
        prefill, _, step, _ = engine_run(model, short, EvictionConfig("none"), graphs)
        line(f"murmur {'graphs' if graphs else 'eager'} (same steps)", prefill, step, seen, hf_step)
    full = make_requests(model, [prompt] * rows, steps, device, parts.dtype, setup.prompt)
    for name, eviction in setup.policies.items():
        prefill, _, step, kept = engine_run(model, full, eviction, True)
        line(f"murmur {name}", prefill, step, kept * (prompt + steps / 2), None)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dry-run", action="store_true", help="toy shapes on the CPU: every path but CUDA")
    parser.add_argument("--batches", help="comma-separated batch sizes (default 16,64)")
    parser.add_argument("--steps", type=int, help="decode steps of the policy rows (default 2700)")
    parser.add_argument("--hf-steps", type=int, help="decode steps of the HF rows (default 128)")
    parser.add_argument("--no-speed", action="store_true", help="correctness checks only")
    args = parser.parse_args()
    if not args.dry_run and not torch.cuda.is_available():
        print("gpu_check: skipped, needs a CUDA GPU (use --dry-run to exercise it on the CPU)")
        return
    setup = DRY if args.dry_run else FULL
    device = torch.device("cuda" if not args.dry_run else "cpu")
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    batches = tuple(int(b) for b in args.batches.split(",")) if args.batches else setup.batches
    started = time.perf_counter()
    checks = check_small(device)
    model = build_model(setup.model, device, dtype)
    checks.append(check_forced(model, setup, device, dtype))
    lines: list[str] = []
    bandwidth = copy_bandwidth(device)
    if not args.no_speed:
        for rows in batches:
            steps, hf_steps = args.steps or setup.steps, args.hf_steps or setup.hf_steps
            lines += speed(model, setup, rows, bandwidth, hf_steps, steps)
    for check in checks:
        print(f"{'PASS' if check.ok else 'FAIL'} {check.name}: {check.detail}")
    name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu (dry run)"
    parts = ModelParts.from_model(model)
    backend = make_attention("auto", parts.attention_shape, device).name
    glue = "compiled" if MurmurDecoder(model).fused.glue.rope is not rope else "plain"
    print(f"\ndevice {name}, {str(dtype).removeprefix('torch.')}, copy bandwidth {bandwidth / 1e9:.0f} GB/s")
    print(f"attention {backend}, glue {glue}, CUDA graphs {'on' if device.type == 'cuda' else 'emulated'}")
    took = time.perf_counter() - started
    print(f"prompt {sum(setup.prompt)} tokens ({setup.prompt[1]} speech); checks and table took {took:.0f} s")
    print("{:>5} {:<26} {:>9} {:>8} {:>8} {:>6} {:>8} {:>6} {:>7} {:>7}".format(*HEADER))
    print("\n".join(lines))
    raise SystemExit(0 if all(c.ok for c in checks) else 1)


if __name__ == "__main__":
    main()
