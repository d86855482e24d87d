"""Earnings-21: 44 earnings calls with Rev's token-level references (cpWER and WER; no timing).

Layout of Rev's `speech-datasets` repository: `earnings21/media/<id>.mp3` and
`earnings21/transcripts/nlp_references/<id>.nlp` (any folder layout works: files are paired by
id). The NLP files carry speakers but no token times, so tcpWER and DER are reported as not
computable. `subset="eval10"` keeps the ten calls listed in `eval10-file-metadata.csv` (Rev's
representative 10-hour subset) when that file is present.
"""

from __future__ import annotations

import csv
from pathlib import Path

from engine.evaluation.datasets.layout import entry_for, index_tree, pick, require
from engine.evaluation.manifest import Manifest, ManifestError

PREFERRED = ("nlp_references", "media")


def read_earnings21(root: Path, subset: str = "all", allow_missing: bool = False) -> Manifest:
    """A manifest of the Earnings-21 calls found under `root` (`subset`: all or eval10)."""
    if subset not in ("all", "eval10"):
        raise ValueError(f"Earnings-21 subset must be all or eval10, got {subset!r}")
    index = index_tree(root)
    calls = sorted(stem for stem, files in index.items() if files.get("nlp"))
    if subset == "eval10":
        calls = [c for c in calls if c in _eval10_ids(root)]
    found = {
        call: entry_for(call, pick(index[call].get("audio", []), PREFERRED), {"nlp": index[call]["nlp"]})
        for call in calls
    }
    return Manifest(f"earnings21-{subset}", tuple(require(found, f"Earnings-21 in {root}", allow_missing)))


def _eval10_ids(root: Path) -> set[str]:
    listing = next(iter(sorted(root.rglob("eval10-file-metadata.csv"))), None)
    if listing is None:
        raise ManifestError(f"the eval10 subset needs eval10-file-metadata.csv under {root}")
    with listing.open(encoding="utf-8", newline="") as stream:
        return {row["file_id"].strip() for row in csv.DictReader(stream) if row.get("file_id")}
