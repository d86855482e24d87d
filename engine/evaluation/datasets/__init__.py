"""Readers that turn a test set's folder on disk into a `Manifest`, by name.

`DATASETS` maps a name to a reader `(root, allow_missing) -> Manifest`:

- ``ami-ihm`` / ``ami-sdm``: the 16 AMI test meetings (see `ami`);
- ``tedlium``: TED-LIUM 3 long-form test talks (see `tedlium`);
- ``earnings21`` / ``earnings21-eval10``: Earnings-21 calls (see `earnings`);
- ``folder``: any folder of audio files with references of the same name (`x.wav` + `x.stm`,
  `x.seglst.json`, `x.rttm`, `x.uem`, `x.nlp` or `x.txt`), e.g. a synthetic corpus.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from engine.evaluation.datasets import ami, earnings, tedlium
from engine.evaluation.datasets.layout import entry_for, index_tree, pick, require
from engine.evaluation.manifest import Manifest

Reader = Callable[[Path, bool], Manifest]


def read_folder(root: Path, allow_missing: bool = True) -> Manifest:
    """Every audio file under `root` that has at least one reference of the same name."""
    index = index_tree(root)
    found = {
        stem: entry_for(stem, pick(files["audio"]), files)
        for stem, files in sorted(index.items())
        if files.get("audio")
    }
    return Manifest(root.name or "folder", tuple(require(found, f"folder {root}", allow_missing)))


DATASETS: dict[str, Reader] = {
    "ami-ihm": ami.ihm,
    "ami-sdm": ami.sdm,
    "tedlium": lambda root, allow_missing: tedlium.read_tedlium(root, "test", allow_missing),
    "earnings21": lambda root, allow_missing: earnings.read_earnings21(root, "all", allow_missing),
    "earnings21-eval10": lambda root, allow_missing: earnings.read_earnings21(root, "eval10", allow_missing),
    "folder": read_folder,
}


def read_dataset(name: str, root: Path, allow_missing: bool = False) -> Manifest:
    """The manifest of dataset `name` (one of `DATASETS`) found under `root`."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose one of: {', '.join(DATASETS)}")
    return DATASETS[name](root, allow_missing)
