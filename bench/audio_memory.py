"""Measure decode time and peak memory of `load_audio` on a multi-hour file.

Writes a synthetic recording (noise plus drifting tones, 44.1 kHz stereo FLAC, and an AAC .m4a made
from it with ffmpeg when ffmpeg is installed) into a temporary folder, then decodes each file at 16 kHz
and 24 kHz, each decode in a fresh process, and prints wall time and peak resident memory next to the
size of the output array. The ratio (peak RSS − RSS after imports) / output bytes is what the bounded
decoder promises to keep near 1; a naive full-file decode at the source rate would need at least
(source frames × channels × 4 bytes) on top.

    .venv/bin/python bench/audio_memory.py                  # 3 hours, flac and m4a
    .venv/bin/python bench/audio_memory.py --hours 0.5 --formats flac
    .venv/bin/python bench/audio_memory.py --keep /tmp/murmur-bench   # reuse files between runs
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

SOURCE_RATE = 44100
CHANNELS = 2
BLOCK_S = 10


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def write_flac(path: Path, hours: float) -> None:
    """Noise at -40 dBFS plus a slowly gliding tone per channel, written block by block."""
    rng = np.random.default_rng(0)
    frames_total = round(hours * 3600 * SOURCE_RATE)
    block = BLOCK_S * SOURCE_RATE
    with sf.SoundFile(path, "w", SOURCE_RATE, CHANNELS, subtype="PCM_16", format="FLAC") as f:
        for start in range(0, frames_total, block):
            n = min(block, frames_total - start)
            t = (start + np.arange(n)) / SOURCE_RATE
            glide = 300 + 200 * np.sin(2 * np.pi * t / 600)
            phase = 2 * np.pi * np.cumsum(glide) / SOURCE_RATE
            tones = np.stack([0.3 * np.sin(phase), 0.2 * np.sin(1.5 * phase)], axis=1)
            f.write((tones + 0.01 * rng.standard_normal((n, CHANNELS))).astype(np.float32))


def write_m4a(flac: Path, path: Path) -> None:
    cmd = ["ffmpeg", "-y", "-loglevel", "error", "-i", str(flac), "-c:a", "aac", "-b:a", "96k", str(path)]
    subprocess.run(cmd, check=True)


def decode_once(path: Path, rate: int) -> dict[str, float]:
    """Runs in a child process: decode once and report time and memory."""
    from engine.audio.io import load_audio

    baseline = peak_rss_bytes()
    start = time.perf_counter()
    rec = load_audio(path, rate)
    wall = time.perf_counter() - start
    return {
        "wall_s": wall,
        "audio_s": rec.duration,
        "output_bytes": rec.samples.nbytes,
        "baseline_rss": baseline,
        "peak_rss": peak_rss_bytes(),
    }


def measure(path: Path, rate: int) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--decode", str(path), str(rate)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(fmt: str, rate: int, m: dict[str, float]) -> str:
    mb = 1 << 20
    grown = m["peak_rss"] - m["baseline_rss"]
    return (
        f"{fmt:5s} {rate:6d} {m['wall_s']:8.1f} {m['audio_s'] / m['wall_s']:7.0f}x "
        f"{m['output_bytes'] / mb:9.0f} {m['peak_rss'] / mb:9.0f} {grown / mb:9.0f} "
        f"{grown / m['output_bytes']:6.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=3.0)
    parser.add_argument("--formats", default="flac,m4a", help="comma-separated: flac, m4a")
    parser.add_argument("--rates", default="16000,24000")
    parser.add_argument("--keep", type=Path, help="write the test files here and reuse them if present")
    parser.add_argument("--decode", nargs=2, metavar=("PATH", "RATE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.decode:
        print(json.dumps(decode_once(Path(args.decode[0]), int(args.decode[1]))))
        return
    formats = [f for f in args.formats.split(",") if f != "m4a" or shutil.which("ffmpeg")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        files = {f: folder / f"long_{args.hours:g}h.{f}" for f in ("flac", "m4a")}
        start = time.perf_counter()
        if not files["flac"].exists():
            write_flac(files["flac"], args.hours)
        if "m4a" in formats and not files["m4a"].exists():
            write_m4a(files["flac"], files["m4a"])
        print(
            f"{args.hours:g} h of {SOURCE_RATE} Hz stereo ready in {time.perf_counter() - start:.0f} s: "
            + ", ".join(f"{f} {files[f].stat().st_size / (1 << 20):.0f} MiB" for f in formats)
        )
        naive = args.hours * 3600 * SOURCE_RATE * CHANNELS * 4 / (1 << 20)
        print(f"a whole-file float32 decode at the source rate alone would take {naive:.0f} MiB")
        print("fmt     rate   wall_s   speed  out_MiB  peak_MiB  grown_MiB  grown/out")
        for fmt in formats:
            for rate in (int(r) for r in args.rates.split(",")):
                print(report(fmt, rate, measure(files[fmt], rate)), flush=True)


if __name__ == "__main__":
    main()
