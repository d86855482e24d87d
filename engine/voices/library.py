"""The voice library: named people and their voice embeddings in one SQLite file.

Contract:
- `VoiceLibrary(path)` names the file; nothing is created until a voice is stored (`add`).
  Reading a library that does not exist gives no voices. A new file (and its folder) is made
  readable by its owner only: voices are personal data.
- `add(name, samples)` stores samples under a name (creating the person); `rename`, `merge`
  (every sample of one person moves to another, the first is removed) and `remove` change it.
  Each change is one transaction: it happens whole or not at all. A name means the same person in
  any letter case, of any alphabet ("ZOË" is "Zoë").
- Removing a person deletes their embeddings with them, and deleted content is overwritten in the
  file (`PRAGMA secure_delete`), so neither the name nor the vectors can be read back from it.
- Every sample records its `EmbeddingModel`; a person whose samples come from one model refuses
  samples of another (`VoiceLibraryError` saying so), since the two could never be compared.
- A sample keeps the audio stream and channel of the recording it came from. A library written
  before samples kept them reads as the default stream and the mix of channels, and gains the two
  columns at its first change (no new version: a Murmur that predates them still reads and writes
  it, storing neither).
- A file that is not a voice library (corrupt, or another kind of file), one written by a newer
  Murmur, or one another program holds locked for longer than `timeout` seconds raises
  `VoiceLibraryError` with what to do, and is left exactly as it was.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from engine.errors import MurmurError
from engine.voices.samples import EmbeddingModel, KnownVoice, VoiceSample, check_name

SCHEMA_VERSION = 1
_SCHEMA = (
    """CREATE TABLE people (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    added TEXT NOT NULL
)""",
    """CREATE TABLE embeddings (
    id INTEGER PRIMARY KEY,
    person INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    model_version TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    recording TEXT,
    start REAL,
    end REAL,
    added TEXT NOT NULL,
    stream INTEGER,
    channel INTEGER
)""",
    "CREATE INDEX embeddings_person ON embeddings(person)",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)

# every statement the library runs, named once
_ALL_PEOPLE = "SELECT id, name, added FROM people ORDER BY name"
_PLACE = ("stream", "channel")  # the columns added after version 1 was first written
_ALL_SAMPLES = (
    "SELECT person, model, model_version, dim, vector, recording, start, end, added, stream, channel "
    "FROM embeddings ORDER BY id"
)
_ALL_SAMPLES_BEFORE_PLACE = _ALL_SAMPLES.replace("stream, channel", "NULL, NULL")
_COLUMNS = "SELECT name FROM pragma_table_info('embeddings')"
_ADD_COLUMN = "ALTER TABLE embeddings ADD COLUMN {} INTEGER"
_PEOPLE_NAMES = "SELECT id, name FROM people"
_NEW_PERSON = "INSERT INTO people (name, added) VALUES (?, ?)"
_NEW_SAMPLE = (
    "INSERT INTO embeddings (person, model, model_version, dim, vector, recording, start, end, added, "
    "stream, channel) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_RENAME = "UPDATE people SET name = ? WHERE id = ?"
_MODELS_OF = "SELECT DISTINCT model, model_version, dim FROM embeddings WHERE person = ?"
_MOVE_SAMPLES = "UPDATE embeddings SET person = ? WHERE person = ?"
_DELETE_SAMPLES = "DELETE FROM embeddings WHERE person = ?"
_DELETE_PERSON = "DELETE FROM people WHERE id = ?"
_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"


class VoiceLibraryError(MurmurError):
    """The voice library could not be read or changed; the file was left as it was."""


class VoiceLibrary:
    """Named voices in a SQLite file (see the module contract)."""

    def __init__(self, path: str | os.PathLike[str], timeout: float = 5.0) -> None:
        if timeout < 0:
            raise ValueError(f"the lock timeout cannot be negative, got {timeout}")
        self.path = Path(path)
        self.timeout = timeout

    def exists(self) -> bool:
        return self.path.is_file()

    def voices(self) -> tuple[KnownVoice, ...]:
        """Every person with their samples, by name; () when the library does not exist yet."""
        if not self.exists():
            return ()
        with self._connect(write=False) as db:
            people = db.execute(_ALL_PEOPLE).fetchall()
            placed = set(_PLACE) <= _columns(db)
            rows = db.execute(_ALL_SAMPLES if placed else _ALL_SAMPLES_BEFORE_PLACE).fetchall()
        samples: dict[int, list[VoiceSample]] = {pid: [] for pid, _, _ in people}
        try:
            for person, *sample in rows:
                samples[person].append(_sample(*sample))
        except (ValueError, KeyError) as exc:
            raise self._error(sqlite3.DatabaseError(f"malformed embedding: {exc}")) from exc
        return tuple(KnownVoice(name, tuple(samples[pid]), added) for pid, name, added in people)

    def add(self, name: str, samples: Sequence[VoiceSample]) -> KnownVoice:
        """Store `samples` as `name`'s voice (a new person, or more samples of a known one)."""
        name = check_name(name)
        if not samples:
            raise ValueError(f"no voice samples to store for {name}")
        now = _now()
        with self._connect(write=True) as db:
            row = _find(db, name)
            if row is None:
                person = db.execute(_NEW_PERSON, (name, now)).lastrowid
            else:
                person, name = row
                _check_models(db, person, name, {s.model for s in samples})
            db.executemany(
                _NEW_SAMPLE,
                [(person, s.model.name, s.model.version, s.model.dim, s.vector.astype("<f4").tobytes(),
                  s.recording, s.start, s.end, now, s.stream, s.channel) for s in samples],
            )  # fmt: skip
        return self.voice(name)

    def voice(self, name: str) -> KnownVoice:
        """The person called `name` (any letter case); VoiceLibraryError when there is none."""
        for voice in self.voices():
            if voice.name.casefold() == name.strip().casefold():
                return voice
        raise VoiceLibraryError(f"no voice called {name.strip()!r} in {self.path}")

    def rename(self, old: str, new: str) -> None:
        new = check_name(new)
        with self._connect(write=True) as db:
            person = _person(db, old, self.path)
            clash = _find(db, new)
            if clash is not None and clash[0] != person:
                raise VoiceLibraryError(
                    f"there is already a voice called {clash[1]!r}; merge the two instead"
                )
            db.execute(_RENAME, (new, person))

    def merge(self, source: str, target: str) -> None:
        """Move every sample of `source` to `target`, then remove `source`."""
        with self._connect(write=True) as db:
            moving, keeping = _person(db, source, self.path), _person(db, target, self.path)
            if moving == keeping:
                raise VoiceLibraryError(f"{source!r} and {target!r} are the same voice")
            _check_models(db, keeping, target, _models(db, moving))
            db.execute(_MOVE_SAMPLES, (keeping, moving))
            db.execute(_DELETE_PERSON, (moving,))

    def remove(self, name: str) -> None:
        """Delete the person and every embedding of their voice."""
        with self._connect(write=True) as db:
            person = _person(db, name, self.path)
            db.execute(_DELETE_SAMPLES, (person,))
            db.execute(_DELETE_PERSON, (person,))

    @contextmanager
    def _connect(self, write: bool) -> Iterator[sqlite3.Connection]:
        """A connection inside one transaction (committed when the block ends without error);
        SQLite's errors become `VoiceLibraryError`s that say what happened to the file."""
        if write:
            _make_private_folder(self.path.parent)
        created = write and (not self.exists() or self.path.stat().st_size == 0)
        try:
            db = _open(self.path, write, self.timeout)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        try:
            db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            _check_schema(db, self.path, create=created, write=write)
            yield db
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            db.rollback()
            raise self._error(exc) from exc
        except BaseException:
            db.rollback()
            raise
        finally:
            db.close()
        if created:
            self.path.chmod(0o600)

    def _error(self, exc: sqlite3.Error) -> VoiceLibraryError:
        text = str(exc).lower()
        if "locked" in text:
            return VoiceLibraryError(
                f"the voice library {self.path} is in use by another program; try again when it is done "
                "(nothing was changed)"
            )
        if "not a database" in text or "malformed" in text:
            return VoiceLibraryError(
                f"{self.path} is not a readable voice library (damaged, or another kind of file); it was "
                "left as it is: move it aside to start a new library, or use --voices PATH for another"
            )
        return VoiceLibraryError(f"cannot use the voice library {self.path}: {exc}")


def _open(path: Path, write: bool, timeout: float) -> sqlite3.Connection:
    uri = f"{path.resolve().as_uri()}?mode={'rwc' if write else 'ro'}"
    db = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
    db.execute("PRAGMA secure_delete = ON")
    db.execute("PRAGMA foreign_keys = ON")
    return db


def _check_schema(db: sqlite3.Connection, path: Path, create: bool, write: bool) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in db.execute(_TABLES)}
    if version == 0 and not tables and create:
        for statement in _SCHEMA:
            db.execute(statement)
        return
    if version > SCHEMA_VERSION:
        raise VoiceLibraryError(
            f"{path} was written by a newer Murmur (voice library version {version}; this one reads "
            f"{SCHEMA_VERSION}); it was left as it is"
        )
    if version != SCHEMA_VERSION or not {"people", "embeddings"} <= tables:
        raise VoiceLibraryError(f"{path} is not a Murmur voice library; it was left as it is")
    if write:
        have = _columns(db)
        for column in [c for c in _PLACE if c not in have]:
            db.execute(_ADD_COLUMN.format(column))


def _columns(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute(_COLUMNS)}


def _find(db: sqlite3.Connection, name: str) -> tuple[int, str] | None:
    """The person (id, stored name) called `name` in any letter case, of any alphabet (SQLite's
    NOCASE folds only A-Z: "ZOË" would otherwise be a second person beside "Zoë")."""
    wanted = name.strip().casefold()
    return next(((int(i), n) for i, n in db.execute(_PEOPLE_NAMES) if n.casefold() == wanted), None)


def _person(db: sqlite3.Connection, name: str, path: Path) -> int:
    row = _find(db, name)
    if row is None:
        raise VoiceLibraryError(f"no voice called {name.strip()!r} in {path}")
    return row[0]


def _models(db: sqlite3.Connection, person: int) -> set[EmbeddingModel]:
    return {EmbeddingModel(*row) for row in db.execute(_MODELS_OF, (person,))}


def _check_models(db: sqlite3.Connection, person: int, name: str, incoming: set[EmbeddingModel]) -> None:
    """Refuse samples whose model differs from the person's stored ones: never comparable."""
    have = _models(db, person)
    foreign = incoming - have
    if have and foreign:
        raise VoiceLibraryError(
            f"{name}'s voice was stored with the speaker model {', '.join(sorted(map(str, have)))}; "
            f"embeddings of {', '.join(sorted(map(str, foreign)))} cannot be compared with it. Remove "
            f"{name} and add the voice again, or store it under another name"
        )


def _sample(
    model: str, version: str, dim: int, blob: bytes, recording: str | None,
    start: float | None, end: float | None, added: str, stream: int | None, channel: int | None,
) -> VoiceSample:  # fmt: skip
    vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    return VoiceSample(
        vector, EmbeddingModel(model, version, dim), recording, start, end, added, stream, channel
    )


def _make_private_folder(folder: Path) -> None:
    if not folder.exists():
        folder.mkdir(parents=True, mode=0o700)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
