"""Spectral clustering of speaker embeddings, the number of speakers found by the eigengap.

Contract of `cluster(embeddings, count, neighbours, max_points)`:
- the affinity graph links each embedding to its `neighbours` fraction (at least 10) most
  cosine-similar others, symmetrised; its normalised Laplacian's smallest eigenvalues are taken;
- the number of speakers is the position of the largest gap between consecutive eigenvalues (so one
  speaker is found when the graph is well connected), then moved into the user's bounds, or the
  exact count when given (never more clusters than embeddings, at most `MAX_SPEAKERS`);
- points are clustered by k-means (`kmeans`: k-means++ starts, the best of 10, fixed seed, so runs
  repeat; plain numpy, where scikit-learn's import alone held ~0.1 GB) on their row-normalised
  spectral coordinates;
- memory and time stay bounded: beyond `max_points` embeddings, an evenly spaced subset is clustered
  and every embedding then joins the cluster with the most similar centroid;
- labels are 0..k-1, numbered in order of first appearance.
"""

from __future__ import annotations

import numpy as np

from engine.speakers.diarization import SpeakerCount

MAX_SPEAKERS = 20
MIN_NEIGHBOURS = 10


def cluster(
    embeddings: np.ndarray,  # (N, D), unit length
    count: SpeakerCount | None = None,
    neighbours: float = 0.03,
    max_points: int = 2000,
) -> np.ndarray:  # (N,) int
    n = len(embeddings)
    if n <= 2 or (count is not None and count.exact == 1):
        return np.zeros(n, dtype=int)
    step = max(1, -(-n // max_points))
    sample = embeddings[::step]
    labels = spectral(sample, count, neighbours)
    if step > 1:
        labels = nearest_centroid(embeddings, centroids(sample, labels))
    return first_appearance_order(labels)


def spectral(x: np.ndarray, count: SpeakerCount | None, neighbours: float) -> np.ndarray:
    from scipy.linalg import eigh

    n = len(x)
    laplacian = normalised_laplacian(knn_affinity(x, max(MIN_NEIGHBOURS, round(neighbours * n))))
    top = min(MAX_SPEAKERS + 1, n)
    values, vectors = eigh(laplacian, subset_by_index=[0, top - 1])
    k = estimate_speakers(values, count)
    if k == 1:
        return np.zeros(n, dtype=int)
    coords = vectors[:, :k]
    coords = coords / np.maximum(np.linalg.norm(coords, axis=1, keepdims=True), 1e-12)
    return kmeans(coords, k)


def kmeans(x: np.ndarray, k: int, restarts: int = 10, seed: int = 0, rounds: int = 300) -> np.ndarray:
    """Labels (N,) of the lowest-inertia of `restarts` Lloyd runs from k-means++ starts on (N, D) points."""
    rng = np.random.default_rng(seed)
    best, best_inertia = np.zeros(len(x), dtype=int), np.inf
    for _ in range(restarts):
        centres = _plus_plus(x, k, rng)
        labels = np.full(len(x), -1)
        for _ in range(rounds):
            distances = ((x[:, None, :] - centres[None]) ** 2).sum(axis=2)  # (N, k)
            new = np.argmin(distances, axis=1)
            if np.array_equal(new, labels):
                break
            labels = new
            centres = np.stack([x[labels == j].mean(axis=0) if np.any(labels == j) else centres[j]
                                for j in range(k)])  # fmt: skip
        inertia = float(distances[np.arange(len(x)), labels].sum())
        if inertia < best_inertia - 1e-12:
            best, best_inertia = labels, inertia
    return best


def _plus_plus(x: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ starting centres: each next one drawn with probability ∝ squared distance: (k, D)."""
    centres = [x[rng.integers(len(x))]]
    closest = ((x - centres[0]) ** 2).sum(axis=1)
    for _ in range(1, k):
        total = closest.sum()
        pick = rng.choice(len(x), p=closest / total) if total > 0 else rng.integers(len(x))
        centres.append(x[pick])
        closest = np.minimum(closest, ((x - x[pick]) ** 2).sum(axis=1))
    return np.stack(centres)


def knn_affinity(x: np.ndarray, k: int) -> np.ndarray:
    """Cosine similarities kept only to each point's `k` nearest others, symmetrised: (N, N)."""
    sims = np.clip(x @ x.T, 0.0, 1.0)
    np.fill_diagonal(sims, 0.0)
    k = min(k, len(x) - 1)
    nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    affinity = np.zeros_like(sims)
    np.put_along_axis(affinity, nearest, np.take_along_axis(sims, nearest, axis=1), axis=1)
    return np.maximum(affinity, affinity.T)


def normalised_laplacian(affinity: np.ndarray) -> np.ndarray:
    degree = affinity.sum(axis=1)
    inv = 1.0 / np.sqrt(np.maximum(degree, 1e-12))
    return np.eye(len(affinity)) - inv[:, None] * affinity * inv[None, :]


def estimate_speakers(eigenvalues: np.ndarray, count: SpeakerCount | None) -> int:
    """The k after which the sorted eigenvalues jump most, then brought within the user's bounds."""
    most = len(eigenvalues) - 1
    gaps = np.diff(eigenvalues)  # gaps[k - 1]: the jump after the k-th smallest eigenvalue
    found = 1 + int(np.argmax(gaps))
    return max(1, min(count.clamp(found) if count is not None else found, most))


def centroids(embeddings: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Unit-length mean embedding of each label 0..max: (K, D)."""
    k = int(labels.max()) + 1 if len(labels) else 0
    out = np.zeros((k, embeddings.shape[1]), np.float64)
    np.add.at(out, labels, embeddings)
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def nearest_centroid(embeddings: np.ndarray, cents: np.ndarray) -> np.ndarray:
    """Index of the most cosine-similar centroid for each embedding."""
    return np.asarray(np.argmax(embeddings @ cents.T, axis=1))


def first_appearance_order(labels: np.ndarray) -> np.ndarray:
    """Relabel so that labels appear as 0, 1, 2… in order."""
    order = {int(lab): i for i, lab in enumerate(dict.fromkeys(labels.tolist()))}
    return np.array([order[int(lab)] for lab in labels], dtype=int)
