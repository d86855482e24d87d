"""`murmur serve` under load: concurrent clients sharing one decode batch, VibeVoice then whisper.

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

Then whisper (the bundled tiny.en, the server's default backend) behind its own `murmur serve`
subprocess with `--batch-size 16` (rows of a shared call; each job still has at most its own
batch in a call, 2 chunks on a CPU, as in a local run): 8 different files of `WHISPER_SECONDS`
of the demo meeting (several chunks each, a different gain each) sent by 1 client, then by 8 at
once; rows per batched decode call from /metrics (rows ÷ calls over each run), and the 8 files
transcribed one after another by a local pipeline with the same model (the sequential baseline,
warmed up as the server is). Its line is the last:
`whisper rows/call 8 vs 1 client: X×; throughput 8 clients vs sequential: Y×`.

    .venv/bin/python bench/serve.py [--device cpu|cuda] [--sequential 16] [--backends vibevoice,whisper]
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
from engine.pipeline import Pipeline, PipelineConfig  # noqa: E402
from engine.remote.client import RemoteClient  # noqa: E402
from engine.speakers import SpeakerConfig  # noqa: E402
from engine.testing.tiny import TinyShape, save_tiny_checkpoint  # noqa: E402

CLIENTS = (1, 4, 16)
SECONDS = 120.0
WHISPER_CLIENTS = 8
WHISPER_SECONDS = 120.0  # five chunks each
WHISPER_BATCH = 16  # rows of a shared call (a lone job still takes its own batch size: 2 on a CPU)


def files(folder: Path, count: int, seconds: float = SECONDS) -> list[Path]:
    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000).samples[: int(seconds * 16000)]
    gains = np.linspace(0.6, 1.0, count)
    return [write_flac(folder / f"meeting{i}-{seconds:g}.flac", demo * g) for i, g in enumerate(gains)]


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


def rows_and_calls(served) -> tuple[float, float]:
    m = served.metrics()
    return m["murmur_whisper_rows_total"], m["murmur_whisper_calls_total"]


def whisper(folder: Path, device: str) -> str:
    """The whisper run (see the module docstring); returns its summary line."""
    paths = files(folder, WHISPER_CLIENTS, WHISPER_SECONDS)
    flags = ("--backend", "whisper", "--device", device, "--diarizer", "none", "--max-queued-jobs", "32",
             "--batch-size", str(WHISPER_BATCH))  # fmt: skip
    per_call: dict[int, float] = {}
    throughput: dict[int, float] = {}
    with server(*flags) as served:
        run_clients(served.url, paths[:1])  # warm-up
        for n in (1, WHISPER_CLIENTS):
            rows0, calls0 = rows_and_calls(served)
            wall, latencies = run_clients(served.url, paths[:n])
            rows1, calls1 = rows_and_calls(served)
            per_call[n] = (rows1 - rows0) / max(calls1 - calls0, 1)
            throughput[n] = n * WHISPER_SECONDS / wall
            print(f"whisper {n} client(s): {throughput[n]:7.2f} audio-s/wall-s · latency p50 "
                  f"{statistics.median(latencies):6.1f} s · {per_call[n]:5.2f} rows/call "
                  f"({calls1 - calls0:.0f} calls)", flush=True)  # fmt: skip
    local = Pipeline.create("whisper", PipelineConfig(speakers=SpeakerConfig(diarizer="none")), device=device)
    local.run(paths[0])  # warm-up, as for the server
    started = time.perf_counter()
    for path in paths:
        local.run(path)
    seconds = time.perf_counter() - started
    sequential = len(paths) * WHISPER_SECONDS / seconds
    n = WHISPER_CLIENTS
    print(f"whisper {n} sequential local runs: {sequential:7.2f} audio-s/wall-s, {seconds:.1f} s", flush=True)
    return (f"whisper rows/call {n} vs 1 client: {per_call[n] / per_call[1]:.1f}×; "
            f"throughput {n} clients vs sequential: {throughput[n] / sequential:.1f}×")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--sequential", type=int, default=16, help="local runs timed for the baseline")
    parser.add_argument("--backends", default="vibevoice,whisper", help="which to run, comma separated")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    backends = args.backends.split(",")
    if "vibevoice" in backends:
        vibevoice(folder, args)
    if "whisper" in backends:
        print(whisper(folder, args.device), flush=True)


def vibevoice(folder: Path, args: argparse.Namespace) -> None:
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
