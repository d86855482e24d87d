"""Rows admitted per eviction policy at equal KV bytes, on real decoding, and the plan beside it.

The tiny VibeVoice checkpoint of `engine/testing/tiny.py`'s `CAPACITY_RECIPE` (built on first use
and cached: 129 steps, 40 minutes on two cores shared with other runs) transcribes real audio
through the backend's own request building, timestamp reader and Murmur's engine: its three
synthetic clips (59.5, 74.6 and 87.2 s of 16, 20 and 24 turns by 2–4 voices) and the bundled demo
meeting cut at a pause into two chunks (59.9 and
64.5 s, four voices). It was trained to reply to each with its reference, and, on half its passes,
with the speech behind its transcript hidden as `speech-anchor` evicts it (`tiny_masks`): a model
that memorises a few clips can otherwise recall them from any of their audio and changes its words
when speech it has already transcribed goes, which a model reading the audio near what it writes,
as a real speech LLM does, would not. Long chunks because a row keeps its system tokens,
`sinks + look-ahead` speech and every output whatever the policy: at 6–8 s of speech the speech a
row can give up is too small a share of it to show a gain. Every policy runs the same requests
(the clips `--copies` times, the meeting once) with the same KV memory budget (8 rows of `none` at
the longest request's size).

Per policy: rows each store held (the first store, then any re-sized one), times a store grew in
place, decode steps, tokens per second, each policy's transcript against `none`'s (WER delta over
all words, then over the synthetic clips alone), the speech its harm meter reports lost, and rows
whose speech-anchor stopped. The planned rows (the policies' arithmetic at the same budget, not a
measurement) follow. The last line compares the fewest rows each real run held, so a row that
outgrew its store and resumed in one re-sized for all its speech counts:

    real decoding: speech-anchor rows vs none: X×, WER delta D

    .venv/bin/python bench/kv_capacity.py [--copies 4]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.audio.io import load_audio  # noqa: E402
from engine.backends.vibevoice.anchor import speech_anchor, speech_token_rate, voiced_spans  # noqa: E402
from engine.backends.vibevoice.boundary import segment_boundary  # noqa: E402
from engine.backends.vibevoice.budget import token_budget  # noqa: E402
from engine.backends.vibevoice.config import SAMPLE_RATE, VibeVoiceConfig  # noqa: E402
from engine.backends.vibevoice.decoders import create_decoder  # noqa: E402
from engine.backends.vibevoice.inputs import build_request  # noqa: E402
from engine.backends.vibevoice.loading import load_model  # noqa: E402
from engine.backends.vibevoice.parsing import parse_reply  # noqa: E402
from engine.decode.admission import rows_within  # noqa: E402
from engine.decode.eviction import EvictionConfig, make_policy  # noqa: E402
from engine.decode.kv_store import round_up  # noqa: E402
from engine.decode.loop_guard import LoopGuardConfig  # noqa: E402
from engine.evaluation.metrics import word_error  # noqa: E402
from engine.testing.tiny import CAPACITY_RECIPE, read_clips, tiny_trained_model  # noqa: E402
from engine.types import Chunk  # noqa: E402

POLICIES = {  # the windows of the 20–40 s clips; speech-anchor's as the checkpoint's hidden passes (s8 a32)
    "none": EvictionConfig("none"),
    "output (s4 w128)": EvictionConfig("output", n_sink=4, output_window=128),
    "speech (s4 w64 d32 r1)": EvictionConfig(
        "speech", speech_sink=4, speech_window=64, delay=32, speech_rate=1
    ),
    "speech-anchor (s8 b64 a32)": EvictionConfig("speech-anchor", speech_sink=8, look_back=64, look_ahead=32),
}


def pieces(model: Path, copies: int) -> tuple[list[tuple[np.ndarray, Chunk]], range]:
    """(samples, chunk) per request: each synthetic clip `copies` times, then the meeting's chunks
    once; and the request ids of the synthetic clips."""
    found = [(path.stem, load_audio(path, SAMPLE_RATE)) for path, _ in read_clips(model)]
    synthetic = [audio for name, audio in found if name.startswith("clip")] * copies
    meeting = [audio for name, audio in found if name.startswith("meeting")]
    items = [(a.samples, Chunk(i, 0.0, a.duration)) for i, a in enumerate(synthetic + meeting)]
    return items, range(len(synthetic))


def requests(loaded, items, config: VibeVoiceConfig) -> list:
    built = []
    for i, (samples, chunk) in enumerate(items):
        budget = token_budget(len(samples) / SAMPLE_RATE, config)
        request = build_request(loaded, samples, request_id=i, max_new_tokens=budget)
        local = Chunk(chunk.index, 0.0, chunk.duration)  # VAD spans of the whole chunk: all speech
        built.append(dataclasses.replace(request, voiced=voiced_spans(local, request.speech_span)))
    return built


def row_bytes(loaded, slots: int) -> int:
    text = loaded.model.config.text_config
    head_dim = text.hidden_size // text.num_attention_heads
    return 2 * text.num_hidden_layers * text.num_key_value_heads * head_dim * 4 * slots  # float32


def run(loaded, built, policy: EvictionConfig, budget: int) -> dict:
    tokenizer = loaded.processor.tokenizer
    decoder = create_decoder(
        "murmur",
        loaded.model,
        max_batch=len(built),
        eos_token_ids=loaded.tokens.eos_ids,
        segment_boundary=segment_boundary(tokenizer),
        options={"eviction": policy, "kv_memory_limit": budget, "loop": LoopGuardConfig(enabled=False)},
        speech_anchor=speech_anchor(tokenizer, speech_token_rate(loaded.model.config)),
    )
    started = time.perf_counter()
    results = {r.id: r for r in decoder.decode(list(built))}
    seconds = time.perf_counter() - started
    texts = {}
    for i, r in results.items():
        reply = tokenizer.decode(list(r.token_ids), skip_special_tokens=True)
        texts[i] = " ".join(s.text for s in parse_reply(reply, 1e9))
    speech = sum(r.speech_span[1] - r.speech_span[0] for r in built)
    lost = sum((r.stats.speech_lost_fraction or 0.0) * (q.speech_span[1] - q.speech_span[0])
               for r, q in ((results[q.id], q) for q in built))  # fmt: skip
    tokens = sum(len(r.token_ids) for r in results.values())
    return {
        "rows": decoder.stats.batches,
        "steps": decoder.stats.steps,
        "tok_s": tokens / seconds,
        "texts": texts,
        "lost": lost / speech if speech else 0.0,
        "stopped": sum(r.stats.anchor_stopped for r in results.values()),
        "growths": decoder.stats.growths,
    }


def planned_rows(built, policy: EvictionConfig, layers: int, budget: int, loaded) -> tuple[int, int]:
    """(slots per row, rows) the plan gives the longest request at `budget` (arithmetic only)."""
    policy_of = make_policy(policy)
    slots = max(
        policy_of.layout(r.prompt_length, r.speech_span, r.max_new_tokens, layers).capacity for r in built
    )
    slots = round_up(slots + 2, 64)
    return slots, rows_within(budget, row_bytes(loaded, slots))


def wer_delta(texts: dict[int, str], baseline: dict[int, str], ids: range | None = None) -> float:
    """Word errors of `texts` against `none`'s transcripts, over all of `none`'s words (of `ids`)."""
    keys = [i for i in baseline if ids is None or i in ids]
    errors = [word_error(baseline[i], texts[i]) for i in keys if baseline[i].strip()]
    words = sum(e.length for e in errors)
    return sum(e.errors for e in errors) / words if words else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=4, help="times each clip is transcribed (default 4)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model = tiny_trained_model(recipe=CAPACITY_RECIPE)
    config = VibeVoiceConfig(model=str(model), device="cpu")
    loaded = load_model(config)
    items, clips = pieces(model, args.copies)
    built = requests(loaded, items, config)
    layers = loaded.model.config.text_config.num_hidden_layers
    none_slots, _ = planned_rows(built, POLICIES["none"], layers, 1 << 62, loaded)
    budget = 8 * row_bytes(loaded, none_slots)
    print(
        f"{len(built)} requests (tiny checkpoint, real audio); KV budget {budget:,} bytes (8 rows of `none`)"
    )
    print(
        "| policy | rows admitted | grown | steps | tok/s | WER vs none | (clips) | speech lost % "
        "| anchor stopped |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    runs = {name: run(loaded, built, policy, budget) for name, policy in POLICIES.items()}
    baseline = runs["none"]["texts"]
    for name, out in runs.items():
        shown = " → ".join(str(r) for r in out["rows"])
        print(
            f"| {name} | {shown} | {out['growths']} | {out['steps']} | {out['tok_s']:.0f} | "
            f"{wer_delta(out['texts'], baseline):.3f} | {wer_delta(out['texts'], baseline, clips):.3f} | "
            f"{100 * out['lost']:.1f} | {out['stopped']} |"
        )
    print("\nPlan (the policies' arithmetic at the same budget, not a measurement):")
    print("| policy | planned slots/row | planned rows |")
    print("|---|---|---|")
    for name, policy in POLICIES.items():
        slots, rows = planned_rows(built, policy, layers, budget, loaded)
        print(f"| {name} | {slots} | {rows} |")
    anchored = next(n for n in runs if n.startswith("speech-anchor"))
    ratio = min(runs[anchored]["rows"]) / min(runs["none"]["rows"])
    delta = wer_delta(runs[anchored]["texts"], baseline)
    print(f"real decoding: speech-anchor rows vs none: {ratio:.2f}×, WER delta {delta:.3f}")


if __name__ == "__main__":
    main()
