"""Cross-chunk speaker reconciliation for backends that label speakers inside each chunk.

The model's own labels are trusted inside a chunk; this module only decides which global speaker
each chunk-local speaker is. Contract of `reconcile(evidence, config, count)`:
- evidence per (chunk, local speaker): the share of its speech each diarization speaker covers
  (when a diarization ran) and/or one speaker embedding of its audio in that chunk;
- chunks are visited in order; each is solved as an optimal one-to-one assignment (Hungarian,
  `scipy.optimize.linear_sum_assignment`) of its local speakers to the global speakers so far, so
  two local speakers of one chunk never share a global identity. A pair's score is the mean of its
  evidence margins (overlap share against `min_overlap`, cosine similarity against
  `min_similarity`, each scaled to [-1, 1]; for a local speaker with under `short_seconds` of
  speech the similarity bar is lowered by up to `short_slack`, since a second of audio gives a
  noisy embedding and a spurious new speaker costs more than a doubtful match); a local speaker
  whose best feasible score is not positive opens a new global speaker;
- then, with embeddings, `passes` refinement rounds re-solve every chunk against the final
  centroids (leaving the chunk's own contribution out), and global speakers that never share a
  chunk are merged while their centroids are at least `min_similarity` alike, or while there are
  more than the user's maximum / exact speaker count;
- returns a map (chunk index, local speaker) → global id ("G1", "G2"…; stitching renames them).
`majority_map` is the upstream mapping (each local speaker to the diarization speaker it overlaps
most, independently), kept as the baseline that evaluations compare against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.speakers.diarization import Diarization, SpeakerCount
from engine.stitching import SpeakerMap, segment_times
from engine.types import ChunkResult

Key = tuple[int, int]  # (chunk index, local speaker)


@dataclass(frozen=True, slots=True)
class ReconcileConfig:
    min_overlap: float = 0.3  # share of a local speaker's time a diarization speaker must cover
    min_similarity: float = 0.8  # cosine similarity of embeddings that counts as the same person
    short_seconds: float = 3.0  # below this much speech an embedding is noisy: the bar is lowered
    short_slack: float = 0.3  # by up to this much (linearly, all of it at zero seconds)
    passes: int = 2

    def __post_init__(self) -> None:
        if not 0.0 < self.min_overlap < 1.0:
            raise ValueError(f"min overlap must be in (0, 1), got {self.min_overlap}")
        if not -1.0 < self.min_similarity < 1.0:
            raise ValueError(f"min similarity must be in (-1, 1), got {self.min_similarity}")
        if self.short_seconds < 0 or not 0 <= self.short_slack < 1 + self.min_similarity:
            raise ValueError("short-speech allowance must be non-negative and keep the bar above -1")
        if self.passes < 0:
            raise ValueError(f"refinement passes must be non-negative, got {self.passes}")


@dataclass(frozen=True, slots=True, eq=False)
class LocalSpeaker:
    """What is known about one chunk-local speaker."""

    chunk: int
    local: int
    first: float  # absolute start of its first segment
    seconds: float  # how long it speaks in the chunk
    overlaps: Mapping[str, float] | None = None  # diarization label → share of its time (0..1)
    embedding: np.ndarray | None = None  # (D,) unit length


def local_spans(results: Sequence[ChunkResult]) -> dict[Key, list[tuple[float, float]]]:
    """Absolute (start, end) spans of each chunk-local speaker's segments."""
    spans: dict[Key, list[tuple[float, float]]] = {}
    for result in results:
        for seg, start, end in segment_times(result):
            if seg.speaker is not None:
                spans.setdefault((result.chunk.index, seg.speaker), []).append((start, end))
    return spans


def exclusive_spans(spans: Mapping[Key, list[tuple[float, float]]]) -> dict[Key, list[tuple[float, float]]]:
    """Each speaker's spans minus the time another local speaker of the same chunk also talks."""
    out: dict[Key, list[tuple[float, float]]] = {}
    for key, own in spans.items():
        others = [s for k, v in spans.items() if k[0] == key[0] and k != key for s in v]
        out[key] = [piece for span in own for piece in _subtract(span, others)]
    return out


def _subtract(span: tuple[float, float], others: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    pieces = [span]
    for a, b in others:
        pieces = [p for s, e in pieces for p in ((s, min(e, a)), (max(s, b), e)) if p[1] - p[0] > 1e-6]
    return pieces


def gather_evidence(
    spans: Mapping[Key, list[tuple[float, float]]],
    diarization: Diarization | None = None,
    embeddings: Mapping[Key, np.ndarray | None] | None = None,
) -> list[LocalSpeaker]:
    """Evidence for each local speaker, from its spans, a diarization and/or embeddings."""
    out = []
    for key, own in sorted(spans.items(), key=lambda kv: (kv[0][0], min(s for s, _ in kv[1]))):
        seconds = sum(e - s for s, e in own)
        overlaps = None
        if diarization is not None:
            covered: dict[str, float] = {}
            for s, e in own:
                for label, t in diarization.overlaps(s, e).items():
                    covered[label] = covered.get(label, 0.0) + t
            overlaps = {k: min(1.0, v / max(seconds, 1e-9)) for k, v in covered.items()}
        embedding = embeddings.get(key) if embeddings is not None else None
        out.append(LocalSpeaker(key[0], key[1], min(s for s, _ in own), seconds, overlaps, embedding))
    return out


@dataclass(slots=True)
class _Global:
    label: str | None = None  # the diarization speaker it stands for
    members: list[LocalSpeaker] = field(default_factory=list)

    def centroid(self) -> np.ndarray | None:
        vecs = [m.embedding * max(m.seconds, 0.1) for m in self.members if m.embedding is not None]
        if not vecs:
            return None
        total = np.sum(vecs, axis=0)
        return total / max(float(np.linalg.norm(total)), 1e-9)

    def chunks(self) -> set[int]:
        return {m.chunk for m in self.members}


def reconcile(
    evidence: Sequence[LocalSpeaker],
    config: ReconcileConfig | None = None,
    count: SpeakerCount | None = None,
) -> SpeakerMap:
    """Global speaker of every local speaker (see the module contract)."""
    cfg = config or ReconcileConfig()
    by_chunk: dict[int, list[LocalSpeaker]] = {}
    for ev in evidence:
        by_chunk.setdefault(ev.chunk, []).append(ev)
    labels = sorted({lab for ev in evidence if ev.overlaps for lab in ev.overlaps})
    globals_ = [_Global(label=lab) for lab in labels]
    for chunk in sorted(by_chunk):
        _assign(by_chunk[chunk], globals_, cfg)
    has_embeddings = any(ev.embedding is not None for ev in evidence)
    for _ in range(cfg.passes if has_embeddings else 0):
        before = _signature(globals_)
        for chunk in sorted(by_chunk):
            for g in globals_:  # the chunk is solved against the others only
                g.members = [m for m in g.members if m.chunk != chunk]
            _assign(by_chunk[chunk], globals_, cfg)
        if _signature(globals_) == before:
            break
    globals_ = [g for g in globals_ if g.members]
    if has_embeddings:
        _merge_disjoint(globals_, cfg, count)
    globals_.sort(key=lambda g: min(m.first for m in g.members))
    return {(m.chunk, m.local): f"G{i + 1}" for i, g in enumerate(globals_) for m in g.members}


def _assign(chunk: list[LocalSpeaker], globals_: list[_Global], cfg: ReconcileConfig) -> None:
    from scipy.optimize import linear_sum_assignment

    cents = [g.centroid() for g in globals_]
    scores = np.array([[_score(ev, g, c, cfg) for g, c in zip(globals_, cents, strict=True)] for ev in chunk])
    scores = scores.reshape(len(chunk), len(globals_))
    # a column of "new speaker" options per local speaker, each worth 0: matches must score above it
    cost = np.concatenate((-scores, np.zeros((len(chunk), len(chunk)))), axis=1)
    rows, cols = linear_sum_assignment(cost)
    known = len(globals_)
    for r, c in zip(rows, cols, strict=True):
        if c < known and scores[r, c] > 0:
            globals_[c].members.append(chunk[r])
        else:
            globals_.append(_Global(members=[chunk[r]]))


def _score(ev: LocalSpeaker, g: _Global, centroid: np.ndarray | None, cfg: ReconcileConfig) -> float:
    margins = []
    if ev.overlaps is not None and g.label is not None:
        margins.append(_margin(ev.overlaps.get(g.label, 0.0), cfg.min_overlap, 0.0))
    if ev.embedding is not None and centroid is not None:
        shortfall = max(0.0, 1.0 - ev.seconds / cfg.short_seconds) if cfg.short_seconds > 0 else 0.0
        bar = cfg.min_similarity - cfg.short_slack * shortfall
        margins.append(_margin(float(ev.embedding @ centroid), bar, -1.0))
    return float(np.mean(margins)) if margins else -1.0


def _margin(value: float, threshold: float, lowest: float) -> float:
    """`value` against `threshold`, scaled to [-1, 1]: positive above it, negative below."""
    if value >= threshold:
        return (value - threshold) / max(1.0 - threshold, 1e-9)
    return -(threshold - value) / max(threshold - lowest, 1e-9)


def _signature(globals_: list[_Global]) -> list[set[Key]]:
    return [{(m.chunk, m.local) for m in g.members} for g in globals_]


def _merge_disjoint(globals_: list[_Global], cfg: ReconcileConfig, count: SpeakerCount | None) -> None:
    """Merge the most alike pair of speakers that never share a chunk, while allowed (in place)."""
    limit = None if count is None else (count.exact or count.maximum)
    while len(globals_) > 1:
        best: tuple[float, int, int] | None = None
        cents = [g.centroid() for g in globals_]
        for i in range(len(globals_)):
            for j in range(i + 1, len(globals_)):
                a, b = globals_[i], globals_[j]
                if a.chunks() & b.chunks() or cents[i] is None or cents[j] is None:
                    continue
                if a.label is not None and b.label is not None and a.label != b.label:
                    continue  # the diarization says these are different people
                sim = float(cents[i] @ cents[j])
                if best is None or sim > best[0]:
                    best = (sim, i, j)
        over_limit = limit is not None and len(globals_) > limit
        if best is None or (best[0] < cfg.min_similarity and not over_limit):
            return
        _, i, j = best
        globals_[i].members += globals_[j].members
        globals_[i].label = globals_[i].label or globals_[j].label
        del globals_[j]


def majority_map(results: Sequence[ChunkResult], diarization: Diarization) -> SpeakerMap:
    """Baseline: each local speaker → the diarization speaker it overlaps most (may collide)."""
    out: dict[Key, str] = {}
    for ev in gather_evidence(local_spans(results), diarization):
        if overlaps := ev.overlaps:
            out[(ev.chunk, ev.local)] = max(overlaps, key=overlaps.__getitem__)
    return out
