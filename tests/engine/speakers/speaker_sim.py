"""Shared code for the speaker tests: references, simulated model-labelled chunks, cpWER and DER.

`simulate_chunks` plays the part of a speaker-labelling model: it cuts a reference meeting into
chunks (the pipeline's own chunk planner over the reference turns), numbers each chunk's speakers
locally under a random permutation, and jitters every segment boundary, as a real model would.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.audio.chunking import ChunkingConfig, plan_chunks
from engine.evaluation.metrics import cp_error, diarization_error
from engine.evaluation.normalize import MurmurNormalizer
from engine.evaluation.reference import TextSegment
from engine.types import Chunk, ChunkResult, Segment, SpeechSegment, Utterance

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "resources" / "demo" / "meeting"


@dataclass(frozen=True, slots=True)
class RefTurn:
    speaker: str
    start: float
    end: float
    text: str


def load_turns(stem: Path) -> list[RefTurn]:
    rows = json.loads(stem.with_name(stem.name + ".seglst.json").read_text())
    return [RefTurn(r["speaker"], r["start_time"], r["end_time"], r["words"]) for r in rows]


def turns_of(utterances: Sequence[Utterance]) -> list[RefTurn]:
    return [RefTurn(u.speaker, u.start, u.end, u.text) for u in utterances if u.speaker is not None]


def simulate_chunks(
    turns: Sequence[RefTurn], chunk_seconds: float, seed: int, jitter: float = 0.15
) -> list[ChunkResult]:
    """Model-like results over the pipeline's own chunking of the reference turns."""
    duration = max(t.end for t in turns) + 1.0
    speech = [SpeechSegment(t.start, t.end) for t in sorted(turns, key=lambda t: t.start)]
    chunks = plan_chunks(speech, ChunkingConfig(max_seconds=chunk_seconds), duration)
    return simulate_results(turns, chunks, seed, jitter)


def simulate_results(
    turns: Sequence[RefTurn], chunks: Sequence[Chunk], seed: int, jitter: float = 0.15
) -> list[ChunkResult]:
    """Each chunk's turns (by start) with permuted local speakers and jittered boundaries."""
    rng = np.random.default_rng(seed)
    results = []
    for chunk in chunks:
        inside = [t for t in turns if chunk.start <= t.start < chunk.end]
        names = list(dict.fromkeys(t.speaker for t in inside))
        local = dict(zip(names, rng.permutation(len(names)).tolist(), strict=True))
        segments = []
        for t in inside:
            a, b = np.clip(np.array([t.start, t.end]) + rng.normal(0, jitter, 2), chunk.start, chunk.end)
            segments.append(
                Segment(a - chunk.start, max(b, a + 0.05) - chunk.start, t.text, local[t.speaker])
            )
        results.append(ChunkResult(chunk=chunk, segments=tuple(segments)))
    return results


def cpwer(reference: Sequence[RefTurn], hypothesis: Sequence[RefTurn]) -> float:
    """cpWER (meeteval, through `engine.evaluation.metrics`) after the paper's normalisation."""
    normalise = MurmurNormalizer()

    def segments(turns: Sequence[RefTurn]) -> list[TextSegment]:
        return [TextSegment(t.speaker, normalise(t.text), t.start, t.end) for t in turns]

    rate = cp_error(segments(reference), segments(hypothesis)).rate
    assert rate is not None
    return rate


def der(
    reference: Sequence[RefTurn], hypothesis: Sequence[tuple[float, float, str]], collar: float = 0.25
) -> float:
    """pyannote.metrics DER, `collar` total width around reference boundaries, overlap scored."""
    ref = [TextSegment(t.speaker, "", t.start, t.end) for t in reference]
    hyp = [TextSegment(s, "", a, b) for a, b, s in hypothesis]
    rate = diarization_error(ref, hyp, collar=collar).rate
    assert rate is not None
    return rate


def load_words(stem: Path) -> list[RefTurn]:
    rows = json.loads(stem.with_name(stem.name + ".words.json").read_text())
    return [RefTurn(r["speaker"], r["start_time"], r["end_time"], r["words"]) for r in rows]


def best_mapping(reference: Sequence[RefTurn], hypothesis: Sequence[RefTurn]) -> dict[str, str]:
    """Hypothesis speaker → reference speaker, maximising the time they share (Hungarian)."""
    from scipy.optimize import linear_sum_assignment

    refs = sorted({t.speaker for t in reference})
    hyps = sorted({t.speaker for t in hypothesis})
    shared = np.zeros((len(hyps), len(refs)))
    for h in hypothesis:
        for r in reference:
            shared[hyps.index(h.speaker), refs.index(r.speaker)] += max(
                0.0, min(h.end, r.end) - max(h.start, r.start)
            )
    rows, cols = linear_sum_assignment(-shared)
    return {hyps[i]: refs[j] for i, j in zip(rows, cols, strict=True)}
