"""The speaker flags shared by `murmur transcribe`, `eval` and `bench`, and the config they make."""

from __future__ import annotations

import argparse
from typing import Any


def add_speaker_arguments(p: argparse.ArgumentParser) -> None:
    from engine.speakers import DEFAULT_VOICES

    sp = p.add_argument_group("speakers (see docs/speakers.md)")
    sp.add_argument(
        "--diarizer",
        choices=["embedded", "pyannote", "none"],
        default="embedded",
        help="who speaks when: embedded (default, offline), pyannote (needs its weights), none",
    )
    sp.add_argument("--speakers", type=int, metavar="N", help="the number of speakers, if known")
    sp.add_argument("--min-speakers", type=int, metavar="N", help="at least N speakers")
    sp.add_argument("--max-speakers", type=int, metavar="N", help="at most N speakers")
    sp.add_argument(
        "--pyannote",
        metavar="PIPELINE",
        help="pyannote pipeline: a local folder with config.yaml, or a hub id "
        "(default: pyannote/speaker-diarization-community-1)",
    )
    sp.add_argument("--hf-token", help="Hugging Face token for a hub pipeline (default: $HF_TOKEN)")
    sp.add_argument(
        "--speaker-stitching", choices=["one-to-one", "boundary"], default="one-to-one",
        help="chunk speakers → global speakers: one-to-one (default: an optimal assignment per chunk "
        "on the whole chunk) or boundary (the paper's permutation between adjacent chunks, from "
        "the diarization where they meet)",
    )  # fmt: skip
    sp.add_argument(
        "--voices", nargs="?", const=DEFAULT_VOICES, metavar="PATH",
        help="name speakers whose voices you remembered (murmur voices add), from the default voice "
        "library or the one at PATH; put it after the files, or write --voices=PATH",
    )  # fmt: skip


def speaker_config(args: argparse.Namespace) -> Any:
    """The `SpeakerConfig` the speaker flags describe."""
    from engine.speakers import SpeakerConfig

    return SpeakerConfig(
        diarizer=args.diarizer,
        num_speakers=args.speakers,
        min_speakers=args.min_speakers,
        max_speakers=args.max_speakers,
        pyannote=args.pyannote,
        hf_token=args.hf_token,
        stitching=getattr(args, "speaker_stitching", "one-to-one"),
        voices=getattr(args, "voices", None),
    )
