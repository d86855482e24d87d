"""Where `murmur transcribe` writes each input's files, and where a transcript goes if it cannot.

`output_targets(files, out)` gives each input a folder (`--out`, always a folder even when its name
has a dot, else the input's own folder) and a file stem (the input's). Two inputs that would write
the same files — `a/talk.wav` and `b/talk.wav` into one `--out`, or `talk.wav` and `talk.mp3` side
by side — get distinct stems: the later one is `talk-2` (then `-3`...), never an overwrite.

`rescue(transcript, stem)` saves the lossless JSON of a transcript whose export failed (full disk,
folder removed) under `<temp>/murmur-recovered/`, so the hours spent transcribing are not lost; it
returns the path, or None when even that failed (the caller then prints the transcript).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.types import Transcript


@dataclass(frozen=True, slots=True)
class Target:
    """One input's output place: `folder/stem.<format suffix>`."""

    folder: Path
    stem: str
    renamed: bool = False  # the stem differs from the input's, to avoid writing over another input's


def output_targets(files: Sequence[Path], out: Path | None) -> list[Target]:
    """A distinct (folder, stem) for every input, in order."""
    taken: set[tuple[str, str]] = set()
    targets = []
    for path in files:
        folder = out if out is not None else path.parent
        key = str(folder.resolve())
        stem, n = path.stem or "transcript", 1
        while (key, _fold(stem if n == 1 else f"{path.stem}-{n}")) in taken:
            n += 1
        chosen = stem if n == 1 else f"{stem}-{n}"
        taken.add((key, _fold(chosen)))
        targets.append(Target(folder, chosen, renamed=n > 1))
    return targets


def _fold(stem: str) -> str:
    return stem.casefold()  # case-insensitive file systems (macOS, Windows) would collide too


def rescue(transcript: Transcript, stem: str) -> Path | None:
    """Save `transcript` as Murmur JSON in the recovery folder; its path, or None if that failed."""
    from engine.export import export

    folder = Path(tempfile.gettempdir()) / "murmur-recovered"
    name = f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        return export(transcript, folder, ["json"], stem=name)[0]
    except (OSError, ValueError):
        return None
