"""`murmur synth-corpus OUT_DIR`: generate a synthetic long-form test corpus with a manifest.

Each recording is an espeak-ng meeting with exact word-level references (see
`engine.evaluation.corpus`); speaker counts and durations are drawn per recording from the given
ranges (`--speakers 2-4`, `--minutes 1-10`; a single number fixes them). The result is
deterministic in `--seed`. `murmur eval OUT_DIR/manifest.json ...` scores a system on it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out_dir", type=Path, metavar="OUT_DIR", help="folder for the corpus and manifest.json")
    p.add_argument("--recordings", type=int, default=3, help="number of recordings (default 3)")
    p.add_argument("--speakers", default="2-4", help="speakers per recording, N or LOW-HIGH (default 2-4)")
    p.add_argument("--minutes", default="1", help="duration, N or LOW-HIGH, 1–60 (default 1)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--overlap-rate", type=float, default=0.1, help="share of overlapping changes (0.1)")
    p.add_argument("--backchannel-rate", type=float, default=0.15, help="share of short replies (0.15)")
    p.add_argument("--snr-db", type=float, help="add white noise at this SNR (dB)")
    p.add_argument("--rt60", type=float, help="add reverberation with this RT60 (s)")
    p.add_argument("--sample-rate", type=int, default=16000, help="audio rate in Hz (default 16000)")
    p.add_argument("--prefix", default="meeting", help="recording id prefix (default: meeting)")


def parse_range(text: str, kind: Callable[[str], T]) -> tuple[T, T]:
    """`"3"` → (3, 3); `"2-4"` → (2, 4), each converted by `kind`."""
    low, sep, high = text.partition("-")
    try:
        return kind(low), kind(high if sep else low)
    except ValueError as exc:
        raise ValueError(f"expected a number or a LOW-HIGH range, got {text!r}") from exc


def run(args: argparse.Namespace) -> int:
    from engine.errors import MurmurError
    from engine.evaluation.corpus import CorpusConfig, make_corpus

    try:
        config = CorpusConfig(
            recordings=args.recordings,
            speakers=parse_range(args.speakers, int),
            minutes=parse_range(args.minutes, float),
            seed=args.seed,
            overlap_rate=args.overlap_rate,
            backchannel_rate=args.backchannel_rate,
            snr_db=args.snr_db,
            rt60_s=args.rt60,
            sample_rate=args.sample_rate,
            prefix=args.prefix,
        )
        began = time.perf_counter()
        manifest = make_corpus(config, args.out_dir, _progress)
    except (MurmurError, ValueError, OSError) as exc:
        print(f"murmur: error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.recordings} recordings in {time.perf_counter() - began:.1f} s; manifest: {manifest}")
    return 0


def _progress(done: int, total: int, recording_id: str) -> None:
    print(f"  [{done}/{total}] {recording_id}", file=sys.stderr, flush=True)
