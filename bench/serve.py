"""`murmur serve` under load: 1, 4 and 16 concurrent clients sharing one decode batch.

A tiny random-weight VibeVoice checkpoint (the real architecture at toy size, built here, so every
chunk decodes to its full token budget: the same work whatever the batch) runs behind a real
`murmur serve` subprocess on Murmur's engine with `--batch-size 16`. Each client is Murmur's own
client (`engine.remote`) sending a different 2-minute file (the demo meeting, a different gain
each, 16 kHz FLAC). For 1, 4 and 16 clients at once it prints audio seconds per wall second, p50
and p95 job latency, and the mean rows per decode step (from the server's /metrics: rows decoded
÷ steps over the run). Then the same files are transcribed one after another in this process by
a local pipeline with the same settings (the sequential baseline; `--sequential K` times K of
them and scales to 16, and says so). The last line compares rows per step at 16 vs 1 client and
16-client throughput vs the sequential runs.

    .venv/bin/python bench/serve.py [--device cpu|cuda] [--sequential 16]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "engine" / "serve"))

from conftest import server, write_flac  # noqa: E402  (the tests' subprocess helpers)

from engine.audio.io import load_audio  # noqa: E402
from engine.backends.vibevoice.tiny import TinyShape, save_tiny_checkpoint  # noqa: E402
from engine.pipeline import Pipeline, PipelineConfig  # noqa: E402
from engine.remote.client import RemoteClient  # noqa: E402
from engine.speakers import SpeakerConfig  # noqa: E402

CLIENTS = (1, 4, 16)
SECONDS = 120.0


def files(folder: Path, count: int) -> list[Path]:
    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000).samples[: int(SECONDS * 16000)]
    gains = np.linspace(0.6, 1.0, count)
    return [write_flac(folder / f"meeting{i}.flac", demo * g) for i, g in enumerate(gains)]


def run_clients(url: str, paths: list[Path]) -> tuple[float, list[float]]:
    """Wall seconds for all `paths` sent at once, and each job's latency."""
    def one(path: Path) -> float:
        started = time.perf_counter()
        RemoteClient(url, timeout=600).transcribe(load_audio(path, 16000))
        return time.perf_counter() - started

    started = time.perf_counter()
    with ThreadPoolExecutor(len(paths)) as pool:
        latencies = list(pool.map(one, paths))
    return time.perf_counter() - started, latencies


def rows_and_steps(served) -> tuple[float, float]:
    m = served.metrics()
    return m["murmur_decode_row_steps_total"], m["murmur_decode_steps_total"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--sequential", type=int, default=16, help="local runs timed for the baseline")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    model = save_tiny_checkpoint(folder / "tiny", TinyShape(text_init=0.2), seed=1)
    paths = files(folder, max(CLIENTS))
    options = {"engine": "murmur", "batch_size": 16, "device": args.device}
    flags = ("--backend", "vibevoice", "--model", str(model), "--device", args.device, "--engine", "murmur",
             "--batch-size", "16", "--diarizer", "none", "--max-queued-jobs", "32")  # fmt: skip
    per_step: dict[int, float] = {}
    throughput: dict[int, float] = {}
    with server(*flags) as served:
        run_clients(served.url, paths[:1])  # warm-up: first-use costs stay out of the figures
        for n in CLIENTS:
            rows0, steps0 = rows_and_steps(served)
            wall, latencies = run_clients(served.url, paths[:n])
            rows1, steps1 = rows_and_steps(served)
            per_step[n] = (rows1 - rows0) / max(steps1 - steps0, 1)
            throughput[n] = n * SECONDS / wall
            ordered = sorted(latencies)
            p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
            print(f"{n:>2} client(s): {throughput[n]:7.2f} audio-s/wall-s · latency p50 "
                  f"{statistics.median(latencies):6.1f} s, p95 {p95:6.1f} s · {per_step[n]:5.2f} rows/step",
                  flush=True)  # fmt: skip
    config = PipelineConfig(speakers=SpeakerConfig(diarizer="none"))
    local = Pipeline.create("vibevoice", config, model=str(model), **options)
    local.run(paths[0])  # warm-up, as for the server
    count = max(1, min(args.sequential, len(paths)))
    started = time.perf_counter()
    for path in paths[:count]:
        local.run(path)
    seconds = (time.perf_counter() - started) * len(paths) / count
    scaled = "" if count == len(paths) else f" (timed {count}, scaled to {len(paths)})"
    sequential = len(paths) * SECONDS / seconds
    print(f"16 sequential local runs: {sequential:7.2f} audio-s/wall-s, {seconds:.1f} s{scaled}", flush=True)
    print(f"rows/step 16 vs 1 client: {per_step[16] / per_step[1]:.1f}×; "
          f"throughput 16 clients vs sequential: {throughput[16] / sequential:.1f}×")


if __name__ == "__main__":
    main()
