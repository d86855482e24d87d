"""What the voice library holds: people, their voice samples, and the model that embedded them.

Contract:
- `EmbeddingModel` names the speaker encoder (name, version, dimension). Embeddings of two
  different models are never compared: `KnownVoice.centroid(model)` uses only that model's samples.
- `VoiceSample` is one unit-length embedding with where it came from (recording, time range) and
  when it was stored; `KnownVoice` is a named person with their samples, oldest first.
- `check_name` refuses names a user could not tell from a default label ("Speaker 3"), empty
  names, control characters and names over 100 characters, with `ValueError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

MAX_NAME = 100
_DEFAULT_LABEL = re.compile(r"speaker\s*\d+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class EmbeddingModel:
    """A speaker encoder's identity: embeddings are comparable only within one of these."""

    name: str
    version: str
    dim: int

    def __post_init__(self) -> None:
        if not self.name or not self.version or self.dim < 1:
            raise ValueError(f"an embedding model needs a name, a version and a dimension: {self}")

    def __str__(self) -> str:
        return f"{self.name} {self.version}"


@dataclass(frozen=True, slots=True, eq=False)
class VoiceSample:
    """One embedding of a person's voice and its provenance (times in seconds of `recording`, in its
    audio stream `stream` and channel `channel`: None for the default stream, the mix of channels)."""

    vector: np.ndarray  # (dim,) float32, unit length
    model: EmbeddingModel
    recording: str | None = None
    start: float | None = None
    end: float | None = None
    added: str = ""  # ISO 8601 UTC, set by the library when stored
    stream: int | None = None
    channel: int | None = None

    def __post_init__(self) -> None:
        vector = np.asarray(self.vector, dtype=np.float32).reshape(-1)
        if vector.shape != (self.model.dim,):
            raise ValueError(f"a {self.model} embedding has {self.model.dim} values, got {vector.size}")
        norm = float(np.linalg.norm(vector))
        if not np.isfinite(norm) or norm < 1e-6:
            raise ValueError("a voice embedding must be finite and non-zero")
        object.__setattr__(self, "vector", vector / np.float32(norm))
        if (self.start is None) != (self.end is None) or (
            self.start is not None and not 0 <= self.start <= self.end  # type: ignore[operator]
        ):
            raise ValueError(f"invalid time range [{self.start}, {self.end}]")
        for what, value in (("audio stream", self.stream), ("channel", self.channel)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"a sample's {what} is a number from 0, got {value!r}")


@dataclass(frozen=True, slots=True, eq=False)
class KnownVoice:
    """A named person and every sample of their voice the user chose to store."""

    name: str
    samples: tuple[VoiceSample, ...]
    added: str = ""

    def models(self) -> tuple[EmbeddingModel, ...]:
        return tuple(dict.fromkeys(s.model for s in self.samples))

    def centroid(self, model: EmbeddingModel) -> np.ndarray | None:
        """The unit mean of this person's `model` embeddings; None when they have none of it."""
        vectors = [s.vector for s in self.samples if s.model == model]
        if not vectors:
            return None
        mean = np.mean(vectors, axis=0)
        return (mean / max(float(np.linalg.norm(mean)), 1e-9)).astype(np.float32)


def check_name(name: str) -> str:
    """`name` without surrounding spaces, or ValueError saying why it cannot name a voice."""
    clean = name.strip()
    if not clean:
        raise ValueError("a voice needs a name")
    if len(clean) > MAX_NAME:
        raise ValueError(f"a voice's name has at most {MAX_NAME} characters, got {len(clean)}")
    if any(ord(c) < 32 or ord(c) == 127 for c in clean):
        raise ValueError("a voice's name cannot hold control characters")
    if _DEFAULT_LABEL.fullmatch(clean):
        raise ValueError(f"{clean!r} looks like an unnamed speaker's label; give the person's name")
    return clean
