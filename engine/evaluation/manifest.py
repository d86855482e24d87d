"""Evaluation manifests: which recordings make up a test set and where their references are.

A manifest is JSON or CSV. JSON (`.json`)::

    {"format": "murmur-manifest", "version": 1, "name": "ami-ihm-test",
     "recordings": [{"id": "EN2002a", "audio": "audio/EN2002a.wav", "stm": "ref/EN2002a.stm",
                     "rttm": "ref/EN2002a.rttm", "uem": "ref/EN2002a.uem"}, ...]}

CSV (`.csv`): a header row naming the same fields (`id,audio,stm,rttm,seglst,uem,nlp,text,duration`),
one recording a row, empty cells for what is missing. Relative paths are relative to the
manifest's folder. Each recording needs `id` and `audio` and at least one reference: `seglst` or
`stm` (speaker-attributed, timed text), `nlp` (Rev's token files), `text` (plain transcript,
WER only), or `rttm` alone (DER only). `rttm` gives the speaker turns for DER (otherwise the
timed text does) and `uem` the scored regions. A bad manifest raises `ManifestError` naming the
problem; `load_reference(entry)` reads an entry's references (`ReferenceFileError` on bad files).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import MurmurError
from engine.evaluation import reference as refio
from engine.evaluation.reference import Reference, TextSegment

FORMAT = "murmur-manifest"
VERSION = 1
PATH_FIELDS = ("audio", "stm", "rttm", "seglst", "uem", "nlp", "text")
TEXT_FIELDS = ("seglst", "stm", "nlp", "text")  # in order of preference
FIELDS = ("id", *PATH_FIELDS, "duration")


class ManifestError(MurmurError):
    """A manifest file is missing, malformed, or lists a recording without audio or reference."""


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    id: str
    audio: Path
    stm: Path | None = None
    rttm: Path | None = None
    seglst: Path | None = None
    uem: Path | None = None
    nlp: Path | None = None
    text: Path | None = None
    duration: float | None = None  # seconds, when known (informational)

    def __post_init__(self) -> None:
        if not self.id or any(c.isspace() for c in self.id):
            raise ValueError(f"a recording id must be one word, got {self.id!r}")
        if not any(getattr(self, f) for f in (*TEXT_FIELDS, "rttm")):
            raise ValueError(f"recording {self.id} has no reference (stm, seglst, nlp, text or rttm)")


@dataclass(frozen=True, slots=True)
class Manifest:
    name: str
    entries: tuple[ManifestEntry, ...]

    def __post_init__(self) -> None:
        ids = [e.id for e in self.entries]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"recording ids must be unique; repeated: {', '.join(duplicates)}")

    def select(self, ids: Iterable[str] | None = None, limit: int | None = None) -> Manifest:
        """The recordings named in `ids` (all when None), at most `limit` of them."""
        entries = list(self.entries)
        if ids is not None:
            wanted = list(dict.fromkeys(ids))
            known = {e.id for e in entries}
            missing = [i for i in wanted if i not in known]
            if missing:
                raise ManifestError(f"not in the manifest: {', '.join(missing)}")
            entries = [e for e in entries if e.id in wanted]
        return Manifest(self.name, tuple(entries[:limit] if limit is not None else entries))


def read_manifest(path: str | os.PathLike[str]) -> Manifest:
    """The manifest at `path` (.json or .csv); relative paths resolved against its folder."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"cannot read manifest {path}: {exc.strerror or exc}") from exc
    rows, name = _csv_rows(text) if path.suffix.lower() == ".csv" else _json_rows(text, path)
    entries = []
    for i, row in enumerate(rows):
        try:
            entries.append(_entry(row, path.parent))
        except (TypeError, ValueError) as exc:
            raise ManifestError(f"{path}: recording {i + 1}: {exc}") from exc
    try:
        return Manifest(name or path.stem, tuple(entries))
    except ValueError as exc:
        raise ManifestError(f"{path}: {exc}") from exc


def write_manifest(manifest: Manifest, path: str | os.PathLike[str]) -> Path:
    """Write `manifest` as JSON or CSV (by suffix); paths under its folder are written relative."""
    path = Path(path)
    rows = [_row(e, path.parent) for e in manifest.entries]
    if path.suffix.lower() == ".csv":
        stream = io.StringIO()
        writer = csv.DictWriter(stream, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in rows)
        text = stream.getvalue()
    else:
        head = {"format": FORMAT, "version": VERSION, "name": manifest.name}
        body = ",\n".join("    " + json.dumps(r, ensure_ascii=False) for r in rows)
        text = json.dumps(head)[:-1] + ', "recordings": [\n' + body + "\n]}\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load_reference(entry: ManifestEntry) -> Reference:
    """The references an entry names, read and filtered to its recording."""
    segments: list[TextSegment] = []
    for kind in TEXT_FIELDS:
        source = getattr(entry, kind)
        if source is not None:
            segments = _read_segments(kind, source, entry.id)
            break
    turns = refio.parse_rttm(refio.read_text(entry.rttm), entry.id) if entry.rttm else []
    uem = refio.parse_uem(refio.read_text(entry.uem), entry.id) if entry.uem else []
    return Reference(entry.id, refio.in_reading_order(segments), tuple(turns), tuple(uem))


def _read_segments(kind: str, path: Path, recording_id: str) -> list[TextSegment]:
    text = refio.read_text(path)
    try:
        if kind == "seglst":
            return refio.parse_seglst(text, recording_id)
        if kind == "stm":
            return refio.parse_stm(text, recording_id)
        if kind == "nlp":
            return refio.parse_nlp(text)
    except refio.ReferenceFileError as exc:
        raise refio.ReferenceFileError(f"{path}: {exc}") from exc
    return [TextSegment(refio.UNKNOWN_SPEAKER, " ".join(text.split()))]


def _json_rows(text: str, path: Path) -> tuple[list[dict[str, Any]], str | None]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{path} is not a manifest: invalid JSON ({exc.msg}, line {exc.lineno})") from exc
    if isinstance(data, list):
        return data, None
    if not isinstance(data, dict) or not isinstance(data.get("recordings"), list):
        raise ManifestError(f'{path} is not a manifest: expected {{"recordings": [...]}}')
    if data.get("version", VERSION) != VERSION:
        raise ManifestError(f"{path}: manifest version {data.get('version')!r}; this Murmur reads {VERSION}")
    return data["recordings"], data.get("name")


def _csv_rows(text: str) -> tuple[list[dict[str, Any]], str | None]:
    reader = csv.DictReader(io.StringIO(text))
    return [{k.strip(): v.strip() for k, v in row.items() if k and v and v.strip()} for row in reader], None


def _entry(row: dict[str, Any], base: Path) -> ManifestEntry:
    if not isinstance(row, dict):
        raise ValueError("expected an object with at least id and audio")
    unknown = sorted(set(row) - set(FIELDS))
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}; known: {', '.join(FIELDS)}")
    if "id" not in row or "audio" not in row:
        raise ValueError("every recording needs an id and an audio path")
    values: dict[str, Any] = {"id": str(row["id"])}
    for key in PATH_FIELDS:
        if row.get(key):
            values[key] = base / Path(str(row[key])).expanduser()
    if row.get("duration") not in (None, ""):
        values["duration"] = float(row["duration"])
    return ManifestEntry(**values)


def _row(entry: ManifestEntry, base: Path) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for f in dataclasses.fields(entry):
        value = getattr(entry, f.name)
        if value is None:
            continue
        row[f.name] = _relative(value, base) if isinstance(value, Path) else value
    return row


def _relative(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:  # not under the manifest's folder
        return str(path.resolve())
