"""Provisional speaker labels while recording: each segment against the speakers heard so far.

Contract of `OnlineSpeakers(encoder, threshold)`:
- `assign(samples)` embeds a 16 kHz speech segment with the GE2E encoder
  (`engine.speakers.embedding.SpeakerEncoder.embed_audio`) and returns a speaker id: the closest
  known speaker when the cosine similarity reaches `threshold`, else a new speaker ("S1", "S2"…).
  The matched speaker's centroid moves towards the segment (a running mean, re-normalised).
- Segments shorter than `min_seconds` carry too little voice to found a speaker: they join the
  closest known one (or the first new speaker when none is known yet) without moving it.
- Labels are provisional: the full pipeline's diarization over the whole file replaces them.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

RATE = 16000
THRESHOLD = 0.8
MIN_SECONDS = 1.0


class Embedder(Protocol):
    def embed_audio(self, samples: np.ndarray) -> np.ndarray | None: ...


class OnlineSpeakers:
    def __init__(self, encoder: Embedder, threshold: float = THRESHOLD,
                 min_seconds: float = MIN_SECONDS) -> None:  # fmt: skip
        if not -1.0 < threshold < 1.0:
            raise ValueError(f"speaker similarity threshold must be in (-1, 1), got {threshold}")
        self.encoder = encoder
        self.threshold = threshold
        self.min_seconds = min_seconds
        self._centroids: list[np.ndarray] = []  # (256,) unit vectors
        self._counts: list[int] = []

    def load(self) -> None:
        """Load the encoder now, so the first segment does not wait for it."""
        load = getattr(self.encoder, "load", None)
        if callable(load):
            load()

    @property
    def ids(self) -> list[str]:
        return [_id(i) for i in range(len(self._centroids))]

    def assign(self, samples: np.ndarray) -> str:
        vector = self.encoder.embed_audio(samples)
        if vector is None:
            return _id(0) if not self._centroids else self._nearest(None)[0]
        short = len(samples) < self.min_seconds * RATE
        if not self._centroids:
            return self._add(vector)
        best, similarity = self._nearest(vector)
        if similarity >= self.threshold or short:
            if not short:
                self._update(int(best[1:]) - 1, vector)
            return best
        return self._add(vector)

    def _nearest(self, vector: np.ndarray | None) -> tuple[str, float]:
        if vector is None:
            return _id(int(np.argmax(self._counts))), 0.0
        sims = np.stack(self._centroids) @ vector  # (K,)
        k = int(np.argmax(sims))
        return _id(k), float(sims[k])

    def _add(self, vector: np.ndarray) -> str:
        self._centroids.append(vector / max(float(np.linalg.norm(vector)), 1e-9))
        self._counts.append(1)
        return _id(len(self._centroids) - 1)

    def _update(self, k: int, vector: np.ndarray) -> None:
        n = self._counts[k]
        mean = (self._centroids[k] * n + vector) / (n + 1)
        self._centroids[k] = mean / max(float(np.linalg.norm(mean)), 1e-9)
        self._counts[k] = n + 1


def _id(k: int) -> str:
    return f"S{k + 1}"
