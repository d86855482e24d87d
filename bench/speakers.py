"""Measure the embedded diarizer and cross-chunk reconciliation on synthetic meetings.

`der`: builds espeak meetings (exact references), runs silero VAD and the embedded diarizer, and
prints DER (pyannote.metrics, collar 0.25 s total, overlap scored), speakers found, wall time and
peak resident memory. Long meetings show that time grows linearly and memory stays bounded.

`reconcile`: cuts each meeting's reference into the pipeline's chunks, renumbers each chunk's
speakers by a random permutation and jitters every boundary (σ = 0.15 s) — what a speaker-labelling
model would return — then reconciles from local-speaker embeddings and prints cpWER (meeteval)
for each `--similarity` value (the tuning behind `ReconcileConfig.min_similarity`).

    .venv/bin/python bench/speakers.py der --speakers 4 --minutes 10 30
    .venv/bin/python bench/speakers.py reconcile --speakers 2 4 5 --similarity 0.75 0.8 0.86
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from engine.audio.chunking import ChunkingConfig, plan_chunks
from engine.audio.vad import SileroVad
from engine.evaluation.metrics import cp_error, diarization_error
from engine.evaluation.normalize import MurmurNormalizer
from engine.evaluation.reference import TextSegment
from engine.speakers.embedded import EmbeddedDiarizer
from engine.speakers.reconcile import (
    ReconcileConfig,
    exclusive_spans,
    gather_evidence,
    local_spans,
    reconcile,
)
from engine.stitching import stitch
from engine.synth import MeetingConfig, build_meeting
from engine.types import ChunkResult, Recording, Segment, SpeechSegment, Utterance


def der(reference: list[Utterance], turns: list[tuple[float, float, str]]) -> float:
    """DER (pyannote.metrics, collar 0.25 s total width, overlap scored)."""
    ref = [TextSegment(u.speaker or "?", "", u.start, u.end) for u in reference]
    hyp = [TextSegment(s, "", a, b) for a, b, s in turns]
    return diarization_error(ref, hyp, collar=0.25).rate or 0.0


def cpwer(reference: list[Utterance], hypothesis: list[Utterance]) -> float:
    """cpWER (meeteval) after the paper's normalisation."""
    normalise = MurmurNormalizer()

    def segments(us: list[Utterance]) -> list[TextSegment]:
        return [TextSegment(u.speaker or "?", normalise(u.text), u.start, u.end) for u in us]

    return cp_error(segments(reference), segments(hypothesis)).rate or 0.0


def simulate(reference: list[Utterance], chunk_seconds: float, seed: int) -> list[ChunkResult]:
    rng = np.random.default_rng(seed)
    speech = [SpeechSegment(u.start, u.end) for u in reference]
    chunks = plan_chunks(speech, ChunkingConfig(max_seconds=chunk_seconds), reference[-1].end + 1)
    results = []
    for chunk in chunks:
        inside = [u for u in reference if chunk.start <= u.start < chunk.end]
        names = list(dict.fromkeys(u.speaker for u in inside))
        local = dict(zip(names, rng.permutation(len(names)).tolist(), strict=True))
        segments = []
        for u in inside:
            a, b = np.clip(np.array([u.start, u.end]) + rng.normal(0, 0.15, 2), chunk.start, chunk.end)
            segments.append(
                Segment(a - chunk.start, max(b, a + 0.05) - chunk.start, u.text, local[u.speaker])
            )
        results.append(ChunkResult(chunk, tuple(segments)))
    return results


def bench_der(args: argparse.Namespace, diarizer: EmbeddedDiarizer) -> None:
    print("speakers minutes  DER    found  seconds  peak RSS MB")
    for n in args.speakers:
        for minutes in args.minutes:
            meeting = build_meeting(
                MeetingConfig(speakers=n, duration_s=60 * minutes, seed=args.seed, snr_db=30)
            )
            recording = Recording(meeting.samples, meeting.sample_rate)
            speech = SileroVad().detect(recording)
            started = time.perf_counter()
            diarization = diarizer.diarize(recording, speech)
            seconds = time.perf_counter() - started
            error = der(list(meeting.turns), [(t.start, t.end, t.speaker) for t in diarization.turns])
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            found = len(diarization.speakers)
            print(f"{n:8d} {minutes:7g}  {error:.3f}  {found:5d}  {seconds:7.1f}  {rss:8.0f}")


def bench_reconcile(args: argparse.Namespace, diarizer: EmbeddedDiarizer) -> None:
    errors: dict[float, list[float]] = {s: [] for s in args.similarity}
    for n in args.speakers:
        meeting = build_meeting(
            MeetingConfig(speakers=n, duration_s=60 * args.minutes[0], seed=args.seed, snr_db=30)
        )
        recording = Recording(meeting.samples, meeting.sample_rate)
        reference = list(meeting.turns)
        for seed in range(args.seeds):
            results = simulate(reference, args.chunk_seconds, seed)
            spans = local_spans(results)
            own, keys = exclusive_spans(spans), list(spans)
            vectors = diarizer.embed_spans(recording, [own[k] or spans[k] for k in keys])
            evidence = gather_evidence(spans, None, dict(zip(keys, vectors, strict=True)))
            line = f"{n} speakers, seed {seed}:"
            for s in args.similarity:
                speaker_map = reconcile(evidence, ReconcileConfig(min_similarity=s))
                error = cpwer(reference, list(stitch(results, speaker_map)))
                errors[s].append(error)
                line += f"  {s:g} → {error:.3f}"
            print(line, flush=True)
    for s, values in errors.items():
        print(f"min similarity {s:g}: mean cpWER {np.mean(values):.4f}, worst {np.max(values):.3f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["der", "reconcile"])
    p.add_argument("--speakers", type=int, nargs="+", default=[4])
    p.add_argument("--minutes", type=float, nargs="+", default=[3.0])
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--seeds", type=int, default=3, help="chunk simulations per meeting (reconcile)")
    p.add_argument("--chunk-seconds", type=float, default=30.0)
    p.add_argument("--similarity", type=float, nargs="+", default=[0.75, 0.8, 0.86])
    args = p.parse_args()
    diarizer = EmbeddedDiarizer()
    (bench_der if args.mode == "der" else bench_reconcile)(args, diarizer)


if __name__ == "__main__":
    main()
