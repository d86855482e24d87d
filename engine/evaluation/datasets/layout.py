"""Finding a test set's files on disk: audio and references paired by file name.

`index_tree(root)` walks a folder once and groups files by *stem* (the name without its
recognised suffix: `EN2002a.seglst.json` → `EN2002a`) and *kind* (audio, stm, rttm, seglst, uem,
nlp, text). `pick(paths, prefer)` chooses among several candidates of one kind: the first path
with a folder named in `prefer`, else the shallowest. `entry_for(stem, files, ...)` turns one
stem's files into a `ManifestEntry`. Readers for particular corpora build on these.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from engine.evaluation.manifest import ManifestEntry, ManifestError

AUDIO_SUFFIXES = (".wav", ".flac", ".mp3", ".sph", ".m4a", ".ogg", ".opus", ".mp4")
REFERENCE_SUFFIXES = {
    ".seglst.json": "seglst",
    ".stm": "stm",
    ".rttm": "rttm",
    ".uem": "uem",
    ".nlp": "nlp",
    ".txt": "text",
}
Index = dict[str, dict[str, list[Path]]]  # stem → kind → paths


def index_tree(root: Path) -> Index:
    """Every audio and reference file under `root`, by stem and kind."""
    if not root.is_dir():
        raise ManifestError(f"{root} is not a folder")
    index: Index = defaultdict(lambda: defaultdict(list))
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        stem, kind = classify(path.name)
        if kind is not None:
            index[stem][kind].append(path)
    return index


def classify(name: str) -> tuple[str, str | None]:
    """(stem, kind) of a file name; kind is None for files that are neither audio nor reference."""
    lower = name.lower()
    for suffix, kind in REFERENCE_SUFFIXES.items():
        if lower.endswith(suffix):
            return name[: -len(suffix)], kind
    for suffix in AUDIO_SUFFIXES:
        if lower.endswith(suffix):
            return name[: -len(suffix)], "audio"
    return name, None


def pick(paths: Sequence[Path], prefer: Sequence[str] = ()) -> Path | None:
    """The preferred candidate: first one inside a folder named in `prefer`, else the shallowest."""
    if not paths:
        return None
    for folder in prefer:
        for path in paths:
            if folder in path.parts[:-1]:
                return path
    return min(paths, key=lambda p: (len(p.parts), str(p)))


def entry_for(
    recording_id: str,
    audio: Path | None,
    files: dict[str, list[Path]],
    prefer: Sequence[str] = (),
) -> ManifestEntry | None:
    """A manifest entry from one stem's files, or None when audio or every reference is missing."""
    refs = {kind: pick(files.get(kind, []), prefer) for kind in REFERENCE_SUFFIXES.values()}
    if audio is None or not any(refs.values()):
        return None
    return ManifestEntry(id=recording_id, audio=audio, **{k: v for k, v in refs.items() if v is not None})


def require(found: dict[str, ManifestEntry | None], what: str, allow_missing: bool) -> list[ManifestEntry]:
    """The entries found; ManifestError naming the missing ones unless `allow_missing`."""
    missing = [name for name, entry in found.items() if entry is None]
    if missing and not allow_missing:
        raise ManifestError(
            f"{what}: no audio or no reference found for {len(missing)} recording(s): "
            f"{', '.join(missing[:8])}{' …' if len(missing) > 8 else ''}"
        )
    entries = [e for e in found.values() if e is not None]
    if not entries:
        raise ManifestError(f"{what}: no recording has both audio and a reference")
    return entries
