"""Speed of the two reference decode paths (transformers `generate`) on the trained tiny VibeVoice model.

- chunked: the tiny model's clips as separate chunks, decoded together in one left-padded batch
  (and, for comparison, one at a time);
- single: the same clips joined into one recording, decoded in one pass.
Every request decodes exactly `--tokens` new tokens (end tokens and loops ignored), so the paths
do the same work per request. Prints, per path: audio seconds, requests, generated tokens, encode
(audio → embeddings), prefill and decode seconds, decode tokens per second and real-time factor,
best of `--repeats`. Also prints how long the tiny model took to train.

    .venv/bin/python bench/vibevoice_reference.py [--threads 2] [--repeats 3] [--tokens 200]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np
import torch

from engine.audio.io import load_audio
from engine.backends.vibevoice.config import SAMPLE_RATE, VibeVoiceConfig
from engine.backends.vibevoice.inputs import build_request
from engine.backends.vibevoice.loading import LoadedModel, load_model
from engine.backends.vibevoice.reference import GenerateConfig, GenerateDecoder
from engine.decode.api import DecodeRequest, DecodeResult
from engine.decode.loop_guard import LoopGuardConfig
from engine.testing.tiny import read_clips, tiny_trained_model

NEVER = (10**9,)  # an end token no model writes: every request runs to its budget
NO_LOOPS = LoopGuardConfig(enabled=False, min_tokens=10**9)  # loops are ignored


def run_path(
    loaded: LoadedModel, audios: list[np.ndarray], batch: int, repeats: int, tokens: int
) -> dict[str, float]:
    best: dict[str, float] | None = None
    config = GenerateConfig(max_batch=batch, loops=NO_LOOPS)
    for _ in range(repeats):
        started = time.perf_counter()
        requests = [
            build_request(loaded, a, request_id=i, max_new_tokens=tokens) for i, a in enumerate(audios)
        ]
        encoded = time.perf_counter()
        results = list(GenerateDecoder(loaded.model, config, eos_token_ids=NEVER).decode(requests))
        finished = time.perf_counter()
        row = summary(audios, requests, results, encoded - started, finished - encoded)
        if best is None or row["total_s"] < best["total_s"]:
            best = row
    assert best is not None
    return best


def summary(
    audios: list[np.ndarray],
    requests: list[DecodeRequest],
    results: list[DecodeResult],
    encode: float,
    wall: float,
) -> dict[str, float]:
    tokens = sum(r.stats.generated_tokens for r in results)
    prefill = sum(r.stats.prefill_seconds for r in results)
    decode = sum(r.stats.decode_seconds for r in results)
    audio = sum(len(a) for a in audios) / SAMPLE_RATE
    return {
        "audio_s": audio,
        "requests": len(requests),
        "tokens": tokens,
        "encode_s": encode,
        "prefill_s": prefill,
        "decode_s": decode,
        "total_s": encode + wall,
        "tokens_per_s": tokens / max(decode, 1e-9),
        "rtf": (encode + wall) / audio,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=200, help="new tokens per request")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    folder = tiny_trained_model()
    training = json.loads((folder / "training.json").read_text())
    print(f"tiny model: {folder.name}; trained in {training['steps']} steps, {training['seconds']:.1f} s")
    loaded = load_model(VibeVoiceConfig(model=str(folder), device="cpu"))
    clips = [load_audio(path, SAMPLE_RATE).samples for path, _ in read_clips(folder)]
    repeats, tokens = args.repeats, args.tokens
    paths: dict[str, Callable[[], dict[str, float]]] = {
        f"chunked, batch {len(clips)}": lambda: run_path(loaded, clips, len(clips), repeats, tokens),
        "chunked, batch 1": lambda: run_path(loaded, clips, 1, repeats, tokens),
        "single pass": lambda: run_path(loaded, [np.concatenate(clips)], 1, repeats, tokens),
    }
    header = f"{'path':<18}{'audio s':>8}{'reqs':>5}{'tokens':>7}{'encode':>8}{'prefill':>8}{'decode':>8}"
    print(header + f"{'tok/s':>8}{'RTF':>7}")
    for name, fn in paths.items():
        r = fn()
        print(
            f"{name:<18}{r['audio_s']:>8.1f}{r['requests']:>5.0f}{r['tokens']:>7.0f}{r['encode_s']:>8.2f}"
            f"{r['prefill_s']:>8.2f}{r['decode_s']:>8.2f}{r['tokens_per_s']:>8.1f}{r['rtf']:>7.3f}"
        )


if __name__ == "__main__":
    main()
