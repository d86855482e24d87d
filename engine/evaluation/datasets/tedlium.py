"""TED-LIUM 3 long-form: whole talks, one speaker each, scored on WER (the paper's usage).

The release lays talks out as `TEDLIUM_release-3/legacy/test/sph/<talk>.sph` with
`legacy/test/stm/<talk>.stm` (the `speaker-adaptation` copy is used only when `legacy` is
absent); a flat folder of `<talk>.wav|flac` with `<talk>.stm` or `<talk>.txt` works too. Only
talks inside a folder named `split` are taken when the tree has such folders. STM label fields
(`<o,f0,female>`) and `ignore_time_segment_in_scoring` lines are handled by the STM reader.
"""

from __future__ import annotations

from pathlib import Path

from engine.evaluation.datasets.layout import entry_for, index_tree, pick, require
from engine.evaluation.manifest import Manifest

PREFERRED = ("legacy",)


def read_tedlium(root: Path, split: str = "test", allow_missing: bool = False) -> Manifest:
    """A manifest of the TED-LIUM talks of `split` found under `root`."""
    index = index_tree(root)
    has_splits = any(split in p.parts for files in index.values() for ps in files.values() for p in ps)
    found = {}
    for talk, files in sorted(index.items()):
        audio = [p for p in files.get("audio", []) if not has_splits or split in p.parts[:-1]]
        if not audio:
            continue
        found[talk] = entry_for(talk, pick(audio, PREFERRED), files, PREFERRED)
    return Manifest(f"tedlium-{split}", tuple(require(found, f"TED-LIUM {split} in {root}", allow_missing)))
