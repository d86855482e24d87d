"""What `murmur transcribe` hands on and prints, shared by the local and the cluster runs
(`engine.cli.transcribe`, `engine.cli.cluster_run`): a transcript printed and exported (kept in a
recovery file when the export fails), one-line errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.cli.outputs import Target, rescue
from engine.progress import format_clock
from engine.types import Transcript


def deliver(
    transcript: Transcript, seconds: float, path: Path, target: Target, formats: tuple[str, ...],
    args: argparse.Namespace,
) -> bool:  # fmt: skip
    """Print and export one transcript; if the export fails, keep it in a recovery file."""
    from engine.export import ExportOptions, export

    if not args.quiet:
        print(render_transcript(transcript), flush=True)
    options = ExportOptions(timestamps=not args.no_timestamps)
    try:
        written = export(transcript, target.folder, formats, options, stem=target.stem)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        saved = rescue(transcript, target.stem)
        kept = f"; the transcript was saved to {saved}" if saved else ""
        fail(f"could not write the transcript of {path.name} to {target.folder}: {reason}{kept}")
        if saved is None and args.quiet:
            print(render_transcript(transcript), flush=True)
        return False
    if not args.quiet:
        rtf = seconds / max(transcript.duration, 1e-9)
        print(
            f"\n{path.name}: {format_clock(transcript.duration)} of audio in {seconds:.1f} s "
            f"(real-time factor {rtf:.3f}); wrote {', '.join(str(w) for w in written)}",
            file=sys.stderr,
        )
    return True


def render_transcript(transcript: Transcript) -> str:
    """The transcript as readable lines: `[0:01:02] Speaker 1: text`."""
    lines = []
    for u in transcript.utterances:
        name = transcript.speaker_name(u.speaker)
        who = f"{name}: " if name else ""
        lines.append(f"[{format_clock(u.start)}] {who}{u.text}")
    return "\n".join(lines)


def fail(message: str) -> int:
    print(f"murmur: error: {message}", file=sys.stderr)
    return 1
