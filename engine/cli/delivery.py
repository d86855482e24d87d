"""What `murmur transcribe` hands on and prints, shared by the local and the cluster runs
(`engine.cli.transcribe`, `engine.cli.cluster_run`): a transcript printed and exported (kept in a
recovery file when the export fails), one-line errors, and the lines a server sent before it died
(`keep_received`: saved to a recovery file, and said so).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.cli.outputs import Target, rescue
from engine.progress import format_clock
from engine.types import Transcript, Utterance


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


def keep_received(error: Exception, path: Path) -> str:
    """What a failed remote run kept: the lines received before the server died, saved as a
    partial transcript in the recovery folder; the words to add to its error line."""
    lines = getattr(error, "lines", ())
    if not lines:
        return ""
    utterances = tuple(
        Utterance(float(li["start"]), float(li["end"]), str(li["text"]),
                  None if li.get("chunk_speaker") is None else str(li["chunk_speaker"]))
        for li in lines
    )  # fmt: skip
    saved = rescue(Transcript(utterances=utterances, source=str(path)), f"{path.stem}-partial")
    if saved is None:
        return f"; the {len(lines)} line(s) received could not be saved either"
    return f"; the {len(lines)} line(s) received were saved to {saved}"


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
