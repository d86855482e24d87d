"""The paper's speaker stitching (§3.3): a permutation between adjacent chunks, chosen where they meet.

The model's labels are trusted inside a chunk. For each pair of adjacent chunks i, i+1, every local
speaker gets a diarization profile over the boundary region (the last `seconds` of chunk i, the
first `seconds` of chunk i+1): how long each diarization speaker covers that local speaker's speech
there. π(i) matches chunk i+1's local speakers one-to-one to chunk i's by the largest agreement
(the sum over diarization speakers of the product of the two profiles; Hungarian), and a matched
speaker inherits its partner's global id; applied chunk after chunk, this labels the recording.

The paper leaves open what happens to a speaker who is not heard in the boundary region; here such
a speaker (or one whose best match agrees on nothing) is matched on its whole-chunk profile to the
global speaker whose accumulated profile agrees most (`min_agreement` of its time at least), and
otherwise opens a new global speaker. Against `reconcile.reconcile` (the default, one assignment
per chunk against every global speaker so far, on the whole chunk's diarization and/or embeddings),
this trusts only the boundary where it can.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.speakers.diarization import Diarization
from engine.speakers.reconcile import Key, local_spans
from engine.stitching import SpeakerMap
from engine.types import ChunkResult

Profile = dict[str, float]  # diarization speaker → seconds


def boundary_map(
    results: Sequence[ChunkResult],
    diarization: Diarization,
    seconds: float = 30.0,
    min_agreement: float = 0.3,
) -> SpeakerMap:
    """(chunk index, local speaker) → global id ("G1", "G2"… in order of first appearance)."""
    if seconds <= 0 or not 0 < min_agreement < 1:
        raise ValueError("the boundary region must be positive and the agreement in (0, 1)")
    spans = local_spans(results)
    chunks = sorted(results, key=lambda r: r.chunk.start)
    out: dict[Key, str] = {}
    totals: dict[str, Profile] = {}  # global id → accumulated whole-chunk profile
    previous: ChunkResult | None = None
    for result in chunks:
        index = result.chunk.index
        own = sorted((k for k in spans if k[0] == index), key=lambda k: min(s for s, _ in spans[k]))
        matched: dict[Key, str] = {}
        if previous is not None:
            edge = (previous.chunk.end - seconds, result.chunk.start + seconds)
            before = [k for k in spans if k[0] == previous.chunk.index]
            matched = _permutation(own, before, spans, diarization, edge, out)
        used = set(matched.values())
        for key in own:
            whole = _profile(spans[key], diarization, (-np.inf, np.inf))
            label = matched.get(key) or _closest(whole, totals, used, min_agreement) or f"G{len(totals) + 1}"
            out[key] = label
            used.add(label)
            total = totals.setdefault(label, {})
            for name, t in whole.items():
                total[name] = total.get(name, 0.0) + t
        previous = result
    return out


def _permutation(
    own: list[Key],
    before: list[Key],
    spans: dict[Key, list[tuple[float, float]]],
    diarization: Diarization,
    edge: tuple[float, float],
    labels: dict[Key, str],
) -> dict[Key, str]:
    """π: this chunk's speakers heard in the boundary region → the previous chunk's global ids."""
    mine = {k: _profile(spans[k], diarization, edge) for k in own}
    theirs = {k: _profile(spans[k], diarization, edge) for k in before}
    mine = {k: p for k, p in mine.items() if p}
    theirs = {k: p for k, p in theirs.items() if p}
    if not mine or not theirs:
        return {}
    rows, cols = list(mine), list(theirs)
    agree = np.array([[_agreement(mine[a], theirs[b]) for b in cols] for a in rows])  # (own, before)
    from scipy.optimize import linear_sum_assignment  # here: scipy takes 2 s to import, and the
    # window imports the pipeline only to decode and plan, with no speakers to match

    chosen = linear_sum_assignment(-agree)
    return {rows[i]: labels[cols[j]] for i, j in zip(*chosen, strict=True) if agree[i, j] > 0}


def _profile(own: list[tuple[float, float]], diarization: Diarization, edge: tuple[float, float]) -> Profile:
    """Seconds each diarization speaker covers of `own` inside [edge)."""
    profile: Profile = {}
    for start, end in own:
        a, b = max(start, edge[0]), min(end, edge[1])
        if b > a:
            for name, t in diarization.overlaps(a, b).items():
                profile[name] = profile.get(name, 0.0) + t
    return profile


def _agreement(a: Profile, b: Profile) -> float:
    """Share-weighted agreement of two profiles (1: both all one and the same speaker)."""
    total_a, total_b = sum(a.values()), sum(b.values())
    if total_a <= 0 or total_b <= 0:
        return 0.0
    return sum(a[k] / total_a * b.get(k, 0.0) / total_b for k in a)


def _closest(profile: Profile, totals: dict[str, Profile], taken: set[str], least: float) -> str | None:
    """The global speaker (not `taken` by this chunk) agreeing most with `profile`, if enough."""
    scored = [(_agreement(profile, p), g) for g, p in totals.items() if g not in taken]
    best = max(scored, default=(0.0, None))
    return best[1] if best[0] >= least else None
