"""Murmur's decode engine vs HF `generate` on the CPU: same tokens, how much faster.

A small random Qwen2-shaped model (4 layers, 256 wide, 8 query / 2 KV heads) decodes prompts
shaped like a chunk (system, speech, system: 600 tokens) for 200 new tokens, at batch 1 and 8.
Times are end to end (prefill included), best of `--repeats`. The engine's tokens are asserted
equal to HF's; eviction variants (windows scaled to these short prompts) are timed against none.
"plain loop" is the floor the engine is held to: a bare static-cache loop over the same modules
with grouped-query SDPA (equal-length rows, no eviction, no refill, no loop guard). `--ragged`
adds a batch whose speech spans differ (540-600 prompt tokens), as VAD chunks do: HF must pad.

    .venv/bin/python bench/engine_cpu.py [--threads 2] [--repeats 3]
    .venv/bin/python bench/engine_cpu.py --host     # host CPU time per step at batch 16, per policy
    .venv/bin/python bench/engine_cpu.py --plan     # the step plan alone (`RowTable.plan`), no model
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from transformers import Qwen2Config, Qwen2ForCausalLM

from engine.decode.api import DecodeRequest, DecodeResult
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig
from engine.decode.loop_guard import LoopGuardConfig

PROMPT = (40, 540, 20)  # system, speech, system tokens
NEW_TOKENS = 200
EVICTION = {
    "none": EvictionConfig("none"),
    "output s4 w64": EvictionConfig("output", n_sink=4, output_window=64),
    "speech s32 d32 w128 r8": EvictionConfig("speech", speech_sink=32, speech_window=128, delay=32),
    "both": EvictionConfig("both", n_sink=4, output_window=64, speech_sink=32, speech_window=128, delay=32),
    "speech-follow d32 w128": EvictionConfig(
        "speech-follow", speech_sink=0, speech_window=128, delay=32, speech_rate=1
    ),
}


BENCH_DIMS = dict(
    hidden_size=256, intermediate_size=1024, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2
)
HOST_DIMS = dict(  # 1 layer, 32 wide: the model's math leaves the host's data in the CPU caches
    hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1
)


def build_model(dims: dict[str, int] = BENCH_DIMS, seed: int = 0, **extra: float) -> Qwen2ForCausalLM:
    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=4096, max_position_embeddings=4096, **dims, **extra)
    return Qwen2ForCausalLM(config).eval()


def build_requests(count: int, ragged: bool = False, seed: int = 1) -> list[DecodeRequest]:
    g = torch.Generator().manual_seed(seed)
    head, speech, tail = PROMPT
    out = []
    for i in range(count):
        spoken = speech - (60 * i // max(count - 1, 1) if ragged else 0)
        embeds = torch.randn(head + spoken + tail, 256, generator=g)
        out.append(DecodeRequest(i, embeds, (head, head + spoken), NEW_TOKENS))
    return out


@torch.inference_mode()
def hf_generate(model: Qwen2ForCausalLM, requests: list[DecodeRequest]) -> list[tuple[int, ...]]:
    """Batched `generate`, prompts left-padded to the longest (as the reference decoder does)."""
    longest = max(r.prompt_length for r in requests)
    embeds = torch.zeros(len(requests), longest, 256)
    mask = torch.zeros(len(requests), longest, dtype=torch.long)
    for b, r in enumerate(requests):
        embeds[b, longest - r.prompt_length :], mask[b, longest - r.prompt_length :] = r.inputs_embeds, 1
    out = model.generate(
        inputs_embeds=embeds,
        attention_mask=mask,
        max_new_tokens=NEW_TOKENS,
        do_sample=False,
        eos_token_id=None,
        pad_token_id=0,
    )
    return [tuple(row.tolist()) for row in out]


@torch.inference_mode()
def plain_loop(model: Qwen2ForCausalLM, requests: list[DecodeRequest]) -> list[tuple[int, ...]]:
    """A bare static-cache greedy loop over the model's modules (equal-length prompts only)."""
    lm, cfg = model.model, model.config
    embeds = torch.stack([r.inputs_embeds for r in requests])  # (B, P, d)
    rows, prompt = embeds.shape[:2]
    out = model(inputs_embeds=embeds, use_cache=True, logits_to_keep=1)
    cache = out.cache if hasattr(out, "cache") else out.past_key_values
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    shape = (cfg.num_hidden_layers, rows, cfg.num_key_value_heads, prompt + NEW_TOKENS, head_dim)
    keys, values = torch.zeros(shape), torch.zeros(shape)
    for i, layer in enumerate(cache.layers):
        keys[i, :, :, :prompt], values[i, :, :, :prompt] = layer.keys, layer.values
    token = out.logits[:, -1].argmax(-1)
    tokens = [token]
    for t in range(prompt, prompt + NEW_TOKENS - 1):
        h = lm.embed_tokens(token)  # (B, d)
        cos, sin = lm.rotary_emb(h, torch.full((rows, 1), t))
        for i, layer in enumerate(lm.layers):
            attn, x = layer.self_attn, layer.input_layernorm(h)
            q = rotate(attn.q_proj(x).view(rows, -1, head_dim), cos, sin)
            keys[i, :, :, t] = rotate(attn.k_proj(x).view(rows, -1, head_dim), cos, sin)
            values[i, :, :, t] = attn.v_proj(x).view(rows, -1, head_dim)
            qg = q.view(rows, cfg.num_key_value_heads, -1, head_dim)  # query groups share a KV head
            o = F.scaled_dot_product_attention(qg, keys[i, :, :, : t + 1], values[i, :, :, : t + 1])
            h = h + attn.o_proj(o.reshape(rows, -1))
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        token = model.lm_head(lm.norm(h)).argmax(-1)
        tokens.append(token)
    return [tuple(row.tolist()) for row in torch.stack(tokens, dim=1)]


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """HF's RoPE formula: x·cos + rotate_half(x)·sin."""
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


def engine_decode(
    model: Qwen2ForCausalLM, requests: list[DecodeRequest], eviction: EvictionConfig, host: list[float]
) -> list:
    """The engine's results; `host` gets the run's host milliseconds per step (median)."""
    config = EngineConfig(max_batch=len(requests), eviction=eviction, loop=LoopGuardConfig(enabled=False))
    decoder = MurmurDecoder(model, config)
    results: list[DecodeResult] = sorted(decoder.decode(requests), key=lambda r: r.id)
    host.append(decoder.stats.host_ms_median)
    return results


def best_time(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - started)
    return best, out


def compare(model: Qwen2ForCausalLM, requests: list[DecodeRequest], label: str, repeats: int) -> None:
    hf_s, hf_tokens = best_time(lambda: hf_generate(model, requests), repeats)
    _row(label, "HF generate", hf_s, hf_s, None, len(requests))
    if len({r.prompt_length for r in requests}) == 1:
        plain_s, plain_tokens = best_time(lambda: plain_loop(model, requests), repeats)
        _row(label, "plain loop", plain_s, hf_s, None, len(requests))
        _check(plain_tokens == hf_tokens, "plain loop")
    for name, eviction in EVICTION.items():
        host: list[float] = []
        seconds, results = best_time(lambda: engine_decode(model, requests, eviction, host), repeats)  # noqa: B023
        if name == "none":
            _check([r.token_ids for r in results] == hf_tokens, "murmur")
        kept = results[0].stats.kv_kept_fraction
        _row(label, f"murmur {name}", seconds, hf_s, kept, len(requests), min(host))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--ragged", action="store_true", help="also a batch of 8 with unequal prompts")
    parser.add_argument("--host", action="store_true", help="only the host work per step at batch 16")
    parser.add_argument("--plan", action="store_true", help="only the step plan per step at batch 16")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.host:
        host_per_step()
        return
    if args.plan:
        plan_per_step()
        return
    model = build_model(initializer_range=0.1)
    print(
        f"model: 4 layers, 256 wide, 8/2 heads, FFN 1024, vocab 4096; prompt {sum(PROMPT)}, {NEW_TOKENS} new"
    )
    print(f"torch {torch.__version__}, {args.threads} threads, best of {args.repeats}\n")
    header = ("batch", "decoder", "total s", "ms/tok", "tok/s", "vs HF", "kept", "host ms")
    print("{:<9} {:<20} {:>8} {:>8} {:>8} {:>6} {:>6} {:>8}".format(*header))
    for batch in (int(b) for b in args.batches.split(",")):
        compare(model, build_requests(batch), str(batch), args.repeats)
    if args.ragged:
        compare(model, build_requests(8, ragged=True), "8 ragged", args.repeats)
    print("\ntokens identical to HF generate: plain loop and murmur (eviction off), every batch")
    print("host ms: the engine's host work per decode step (plan, input preparation, settling the")
    print("tokens; median over the run's steps, best run), the part a GPU would wait for")


def host_per_step(rows: int = 16, steps: int = 400) -> None:
    """The engine's host CPU time per decode step at batch `rows`, loop guard on, per policy.

    A 1-layer, 32-wide model keeps the model's own math from evicting the host's data from the CPU
    caches between steps, as on a GPU, where the host only queues the step.
    """
    model = build_model(HOST_DIMS)
    g = torch.Generator().manual_seed(1)
    head, speech, _ = PROMPT
    requests = [
        DecodeRequest(i, torch.randn(sum(PROMPT), 32, generator=g), (head, head + speech), steps)
        for i in range(rows)
    ]
    print(f"host CPU ms per decode step, batch {rows}, {steps} steps, loop guard on (median, mean):")
    for name, eviction in EVICTION.items():
        decoder = MurmurDecoder(model, EngineConfig(max_batch=rows, eviction=eviction))
        list(decoder.decode(requests))
        stats = decoder.stats
        print(f"  {name:<24} {stats.host_ms_median:6.3f} {stats.host_ms_per_step:6.3f}")


def plan_per_step(rows: int = 16, steps: int = 400, repeats: int = 5) -> None:
    """CPU time of the step plan alone (`RowTable.plan` and appending the tokens) at batch `rows`, per
    policy, best of `repeats`: the slot bookkeeping without the model, runner or loop guard. Rows
    resume at 0-2 tokens (ragged steps); `speech-anchor`'s anchors move every 8 steps."""
    import numpy as np

    from engine.decode.eviction import make_policy
    from engine.decode.rows import RowTable
    from engine.decode.slots import RowSlots

    policies = {
        **EVICTION,
        "speech-anchor b16 a64": EvictionConfig("speech-anchor", look_back=16, look_ahead=64),
    }
    head, speech, _ = PROMPT
    print(f"step plan CPU ms per step, batch {rows}, {steps} steps (median, mean; best of {repeats}):")
    for name, eviction in policies.items():
        runs = []
        for _ in range(repeats):
            layout = make_policy(eviction).layout(sum(PROMPT), (head, head + speech), steps + 2, 1)
            table = RowTable(rows)
            for r in range(rows):
                table.occupy(None, RowSlots(layout, r % 3), [0] * (r % 3 + 1))  # type: ignore[arg-type]
            times = []
            for step in range(steps):
                if step % 8 == 0:
                    table.anchor[: table.n] = np.minimum(
                        table.step[: table.n] * speech // steps - 20, speech - 1
                    )
                started = time.thread_time()
                table.plan()
                table.append(np.ones(table.n, dtype=np.int64), np.zeros(table.n, dtype=bool))
                times.append(time.thread_time() - started)
            runs.append((1000 * float(np.median(times)), 1000 * float(np.mean(times))))
        print(f"  {name:<24} {min(r[0] for r in runs):6.3f} {min(r[1] for r in runs):6.3f}")


def _check(same: bool, what: str) -> None:
    if not same:
        raise SystemExit(f"{what} tokens differ from HF generate")


def _row(
    label: str,
    name: str,
    seconds: float,
    hf_seconds: float,
    kept: float | None,
    batch: int,
    host_ms: float | None = None,
) -> None:
    tokens = batch * NEW_TOKENS
    kept_text = f"{kept:6.1%}" if kept is not None else f"{'-':>6}"
    host_text = f"{host_ms:8.3f}" if host_ms is not None else f"{'-':>8}"
    print(
        f"{label:<9} {name:<20} {seconds:8.3f} {1000 * seconds / NEW_TOKENS:8.2f} {tokens / seconds:8.0f} "
        f"{hf_seconds / seconds:5.1f}x {kept_text} {host_text}"
    )


if __name__ == "__main__":
    main()
