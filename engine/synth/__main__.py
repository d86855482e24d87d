"""`python -m engine.synth OUT_STEM [options]`: generate a synthetic meeting and its references.

Writes OUT_STEM.flac (16-bit mono) plus OUT_STEM.rttm, .stm, .seglst.json and .words.json, and
prints one summary line. The session id written into the references is OUT_STEM's file name unless
`--session-id` is given. Invalid options exit with status 2 and a one-line message.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from engine.errors import MurmurError
from engine.synth.meeting import MeetingConfig, SyntheticMeeting, build_meeting
from engine.synth.references import write_meeting


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m engine.synth",
        description="Generate a synthetic multi-speaker meeting with exact reference files.",
    )
    parser.add_argument("out_stem", metavar="OUT_STEM", type=Path, help="output path without extension")
    parser.add_argument("--speakers", type=int, default=4, help="number of speakers, 1–8 (default 4)")
    parser.add_argument("--minutes", type=float, default=2.0, help="target duration, 1–60 (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--overlap-rate",
        type=float,
        default=0.1,
        help="share of speaker changes that overlap, 0–0.5 (default 0.1)",
    )
    parser.add_argument(
        "--backchannel-rate",
        type=float,
        default=0.15,
        help="share of short replies such as 'Right.', 0–0.5 (default 0.15)",
    )
    parser.add_argument("--snr-db", type=float, default=None, help="add white noise at this SNR (dB)")
    parser.add_argument("--rt60", type=float, default=None, help="add reverberation with this RT60 (s)")
    parser.add_argument("--sample-rate", type=int, default=16000, help="output rate in Hz (default 16000)")
    parser.add_argument("--session-id", default=None, help="session id in the references (default: stem)")
    return parser


def config_from_args(args: argparse.Namespace) -> MeetingConfig:
    """The `MeetingConfig` the parsed arguments describe (raises ValueError when invalid)."""
    return MeetingConfig(
        speakers=args.speakers,
        duration_s=args.minutes * 60.0,
        seed=args.seed,
        overlap_rate=args.overlap_rate,
        backchannel_rate=args.backchannel_rate,
        snr_db=args.snr_db,
        rt60_s=args.rt60,
        sample_rate=args.sample_rate,
        session_id=args.session_id or args.out_stem.name,
    )


def summary(meeting: SyntheticMeeting, seconds: float) -> str:
    words = sum(len(t.words) for t in meeting.turns)
    return (
        f"{meeting.config.session_id}: {meeting.duration:.1f} s, {len(meeting.participants)} speakers, "
        f"{len(meeting.turns)} turns, {words} words, {len(meeting.overlaps())} overlaps "
        f"(built in {seconds:.1f} s)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = config_from_args(args)
    except ValueError as error:
        parser.error(str(error))
    began = time.perf_counter()
    try:
        meeting = build_meeting(config)
        paths = write_meeting(meeting, args.out_stem)
    except (MurmurError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(summary(meeting, time.perf_counter() - began))
    for path in paths:
        print(f"  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
