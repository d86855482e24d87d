"""Rows admitted per eviction policy at equal KV bytes: the engine's own admission, on the CPU.

A small random Qwen2-shaped decoder (bench/engine_cpu.py's host model, float32) decodes requests
shaped like a 300 s chunk scaled 1:10 (225 speech tokens between 4 + 6 system tokens, 270 new
tokens), with the paper's windows scaled the same way. A synthetic reply stream stands in for the
transcript: every 5 tokens a segment closes whose Start follows the audio evenly (≈ 4 speech tokens
a segment: a 5 s segment at 1:10), with an overlapping back-channel in every fifth segment. Each
policy runs with the same KV memory budget (`--kv-memory`: 8 rows of `none`); the table shows the
slots each row is sized with, the rows the store admitted (then the rows of each re-sized store, if
a row outgrew its plan and the budget could not grow), the speech evicted before the transcript had
written it, and whether every request produced all its tokens. The last line compares the fewest
rows each run held. The same ratio at the real checkpoint's shapes is `murmur kv-plan`'s H100/H200
table.

    .venv/bin/python bench/kv_capacity.py [--requests 32]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_cpu import HOST_DIMS, build_model

from engine.decode.api import DecodeRequest, SegmentTimes
from engine.decode.config import EngineConfig
from engine.decode.engine import MurmurDecoder
from engine.decode.eviction import EvictionConfig, make_policy
from engine.decode.kv_store import round_up
from engine.decode.loop_guard import LoopGuardConfig

HEAD, SPEECH, TAIL, NEW = 4, 225, 6, 270  # a 300 s chunk at 1:10
SEGMENT_TOKENS = 5
POLICIES = {
    "none": EvictionConfig("none"),
    "output (paper s4 w1024 /10)": EvictionConfig("output", n_sink=4, output_window=102),
    "speech (paper d512 w1024 /10)": EvictionConfig(
        "speech", speech_sink=3, speech_window=102, delay=51, speech_rate=8
    ),
    "both (paper /10)": EvictionConfig(
        "both", n_sink=4, output_window=102, speech_sink=3, speech_window=102, delay=51, speech_rate=8
    ),
    "speech-anchor": EvictionConfig("speech-anchor", speech_sink=3, look_back=6, look_ahead=26),
}


class EvenReply:
    """A reply that closes a segment every `SEGMENT_TOKENS` tokens, its Start following the audio
    evenly over the budget; every fifth one is a back-channel starting inside the previous turn."""

    tokens_per_second = 0.75  # speech tokens per second at 1:10

    def __init__(self) -> None:
        self.read = 0

    def feed(self, token_ids):
        out = []
        for _ in token_ids:
            self.read += 1
            if self.read % SEGMENT_TOKENS == 0:
                k = self.read // SEGMENT_TOKENS
                start = SPEECH * (self.read - SEGMENT_TOKENS) / NEW
                if k % 5 == 0:
                    start = max(start - 2.0, 0.0)  # starts inside the previous segment
                out.append(SegmentTimes(start, start + 4.0, words=12))
        return out


def requests(count: int, dim: int) -> list[DecodeRequest]:
    g = torch.Generator().manual_seed(1)
    prompt = HEAD + SPEECH + TAIL
    return [
        DecodeRequest(i, torch.randn(prompt, dim, generator=g), (HEAD, HEAD + SPEECH), NEW)
        for i in range(count)
    ]


def row_bytes(model: torch.nn.Module, slots: int) -> int:
    c = model.config
    head_dim = c.hidden_size // c.num_attention_heads
    return 2 * c.num_hidden_layers * c.num_key_value_heads * head_dim * 4 * slots


def run(policy: EvictionConfig, model: torch.nn.Module, budget: int, count: int) -> dict[str, object]:
    config = EngineConfig(
        max_batch=count, eviction=policy, kv_memory_limit=budget, loop=LoopGuardConfig(enabled=False)
    )
    decoder = MurmurDecoder(model, config, speech_anchor=EvenReply)
    started = time.perf_counter()
    results = list(decoder.decode(requests(count, model.config.hidden_size)))
    lost = [r.stats.speech_lost_fraction or 0.0 for r in results]
    return {
        "rows": decoder.stats.batches,
        "complete": all(len(r.token_ids) == NEW for r in results) and len(results) == count,
        "lost": sum(lost) / len(lost),
        "seconds": time.perf_counter() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=32, help="requests per policy (default: 32)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model = build_model(HOST_DIMS).float()
    prompt = HEAD + SPEECH + TAIL
    layout_of = {
        name: make_policy(p).layout(prompt, (HEAD, HEAD + SPEECH), NEW, 1) for name, p in POLICIES.items()
    }
    none_slots = round_up(layout_of["none"].capacity + 2, 64)
    budget = 8 * row_bytes(model, none_slots)
    print(
        f"KV budget {budget:,} bytes (8 rows of `none`); {args.requests} requests of {prompt} + {NEW} tokens"
    )
    print("| policy | planned slots/row | rows admitted | speech lost % | all tokens | seconds |")
    print("|---|---|---|---|---|---|")
    admitted = {}
    for name, policy in POLICIES.items():
        out = run(policy, model, budget, args.requests)
        rows = out["rows"]
        admitted[name] = min(rows)
        shown = " → ".join(str(r) for r in rows)
        print(
            f"| {name} | {layout_of[name].capacity} | {shown} | {100 * out['lost']:.1f} | "
            f"{'yes' if out['complete'] else 'NO'} | {out['seconds']:.1f} |"
        )
    print(f"speech-anchor rows vs none: {admitted['speech-anchor'] / admitted['none']:.2f}×")


if __name__ == "__main__":
    main()
