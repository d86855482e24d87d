"""`murmur transcribe --remote URL [--api-key KEY]`: the run happens on a Murmur server.

The file is decoded here and goes up as 16 kHz mono FLAC; the server's own backend, engine and
speaker settings apply (`--speakers N` is passed on). See engine/remote/.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from engine.serve.config import KEY_ENV

if TYPE_CHECKING:
    from engine.transcriber import Transcriber


def add_remote_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("remote (a `murmur serve` server)")
    g.add_argument("--remote", metavar="URL", help="transcribe on this Murmur server, e.g. http://gpu-box:8000")
    g.add_argument("--api-key", help=f"the server's API key (default: ${KEY_ENV})")


def remote_pipeline(args: argparse.Namespace) -> Transcriber | None:
    """A `RemotePipeline` when `--remote` was given, else None."""
    if not getattr(args, "remote", None):
        if getattr(args, "api_key", None):
            raise ValueError("--api-key only applies with --remote")
        return None
    if getattr(args, "ray", None) is not None:
        raise ValueError("--remote and --ray cannot be combined")
    from engine.remote.pipeline import RemotePipeline

    fields = {"num_speakers": str(args.speakers)} if getattr(args, "speakers", None) else {}
    key = args.api_key or os.environ.get(KEY_ENV)
    stream, channel = getattr(args, "audio_stream", None), getattr(args, "channel", "mix")
    return RemotePipeline(args.remote, key, fields, stream, channel)
