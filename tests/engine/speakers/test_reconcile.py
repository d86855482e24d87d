"""Cross-chunk reconciliation: chunk-local speakers of a labelling model become global speakers.

Simulated model output: the reference meeting cut into the pipeline's chunks, every chunk's
speakers renumbered by a random permutation, every boundary jittered (σ = 0.15 s).
"""

from __future__ import annotations

import numpy as np
import pytest
from speaker_sim import RefTurn, cpwer, simulate_chunks, turns_of

from engine.speakers.diarization import Diarization, SpeakerCount, SpeakerTurn
from engine.speakers.reconcile import (
    LocalSpeaker,
    ReconcileConfig,
    exclusive_spans,
    gather_evidence,
    local_spans,
    majority_map,
    reconcile,
)
from engine.stitching import stitch
from engine.synth import MeetingConfig, build_meeting
from engine.types import Recording


def embed_locals(diarizer, recording, results):
    spans = local_spans(results)
    own = exclusive_spans(spans)
    keys = list(spans)
    return spans, dict(zip(keys, diarizer.embed_spans(recording, [own[k] for k in keys]), strict=True))


def reference_diarization(turns: list[RefTurn]) -> Diarization:
    return Diarization(tuple(SpeakerTurn(t.start, t.end, t.speaker) for t in turns))


def stitched_cpwer(turns, results, speaker_map) -> float:
    return cpwer(turns, turns_of(stitch(results, speaker_map)))


@pytest.mark.parametrize("seed", [0, 1])
def test_embeddings_alone_recover_every_speaker_of_the_demo(diarizer, demo, demo_turns, seed):
    results = simulate_chunks(demo_turns, 30, seed)
    spans, embeddings = embed_locals(diarizer, demo, results)
    speaker_map = reconcile(gather_evidence(spans, None, embeddings))
    error = stitched_cpwer(demo_turns, results, speaker_map)
    print(f"demo, 30 s chunks, seed {seed}: cpWER {error:.4f} from embeddings alone")
    assert error <= 0.02
    assert len(set(speaker_map.values())) == 4


def test_the_embedded_diarization_alone_recovers_every_speaker(demo_turns, demo_diarization):
    results = simulate_chunks(demo_turns, 30, seed=2)
    speaker_map = reconcile(gather_evidence(local_spans(results), demo_diarization))
    error = stitched_cpwer(demo_turns, results, speaker_map)
    print(f"demo, 30 s chunks: cpWER {error:.4f} from the embedded diarization alone")
    assert error <= 0.02


def test_a_synthetic_meeting_is_reconciled_from_diarization_and_embeddings(diarizer):
    meeting = build_meeting(MeetingConfig(speakers=3, duration_s=90, seed=11, snr_db=35))
    recording = Recording(meeting.samples, meeting.sample_rate)
    turns = [RefTurn(t.speaker, t.start, t.end, t.text) for t in meeting.turns]
    results = simulate_chunks(turns, 20, seed=3)
    speech = [s for s in _speech(turns)]
    diarization = diarizer.diarize(recording, speech)
    spans, embeddings = embed_locals(diarizer, recording, results)
    speaker_map = reconcile(gather_evidence(spans, diarization, embeddings))
    error = stitched_cpwer(turns, results, speaker_map)
    print(f"synthetic 3-speaker meeting, {len(results)} chunks: cpWER {error:.4f}")
    assert error <= 0.02


def _speech(turns):
    from engine.types import SpeechSegment

    spans = sorted((t.start, t.end) for t in turns)
    merged = [list(spans[0])]
    for a, b in spans[1:]:
        if a <= merged[-1][1] + 0.3:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [SpeechSegment(a, b) for a, b in merged]


def test_optimal_assignment_beats_majority_mapping_when_diarization_merges_two_people(
    diarizer, demo, demo_turns
):
    results = simulate_chunks(demo_turns, 30, seed=4)
    # a diarization that is right everywhere except one chunk, where the first 60 % of each of
    # bob's turns is called "dave": majority mapping then sends both of them to dave
    chunk = next(r.chunk for r in results if {"bob", "dave"} <= _speakers_in(demo_turns, r.chunk))
    turns = []
    for t in demo_turns:
        if t.speaker == "bob" and chunk.start <= t.start < chunk.end:
            cut = t.start + 0.6 * (t.end - t.start)
            turns += [SpeakerTurn(t.start, cut, "dave"), SpeakerTurn(cut, t.end, "bob")]
        else:
            turns.append(SpeakerTurn(t.start, t.end, t.speaker))
    diarization = Diarization(tuple(turns))
    greedy = stitched_cpwer(demo_turns, results, majority_map(results, diarization))
    spans, embeddings = embed_locals(diarizer, demo, results)
    overlap_only = stitched_cpwer(demo_turns, results, reconcile(gather_evidence(spans, diarization)))
    both = stitched_cpwer(demo_turns, results, reconcile(gather_evidence(spans, diarization, embeddings)))
    print(
        f"bob 60 % 'dave' in one chunk: cpWER majority {greedy:.4f}, "
        f"optimal (overlap) {overlap_only:.4f}, optimal (overlap + embeddings) {both:.4f}"
    )
    assert greedy > 0.05
    assert overlap_only <= 0.02 and both <= 0.02


def _speakers_in(turns, chunk) -> set[str]:
    return {t.speaker for t in turns if chunk.start <= t.start < chunk.end}


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def local(chunk: int, speaker: int, embedding: np.ndarray, first: float | None = None) -> LocalSpeaker:
    return LocalSpeaker(
        chunk, speaker, first if first is not None else chunk * 10.0 + speaker, 5.0, None, embedding
    )


def test_two_speakers_of_one_chunk_never_share_a_global_speaker():
    a, b = unit(1, 0, 0), unit(0, 1, 0)
    # chunk 1's two speakers both resemble speaker `a` best: only one of them may be `a`
    evidence = [local(0, 0, a), local(0, 1, b), local(1, 0, unit(1, 0.1, 0)), local(1, 1, unit(1, 0.2, 0))]
    speaker_map = reconcile(evidence, ReconcileConfig(min_similarity=0.5))
    assert speaker_map[(1, 0)] != speaker_map[(1, 1)]
    assert speaker_map[(0, 0)] in (speaker_map[(1, 0)], speaker_map[(1, 1)])


def test_a_voice_unlike_every_known_speaker_opens_a_new_speaker_numbered_by_first_appearance():
    evidence = [local(0, 0, unit(1, 0, 0)), local(1, 0, unit(0, 0, 1)), local(2, 0, unit(1, 0.05, 0))]
    speaker_map = reconcile(evidence)
    assert speaker_map == {(0, 0): "G1", (1, 0): "G2", (2, 0): "G1"}


def test_a_speaker_limit_merges_the_most_alike_speakers_that_never_meet():
    evidence = [local(0, 0, unit(1, 0, 0)), local(0, 1, unit(0, 1, 0)), local(1, 0, unit(0.68, 0.73, 0))]
    assert len(set(reconcile(evidence).values())) == 3
    limited = reconcile(evidence, count=SpeakerCount(maximum=2))
    assert len(set(limited.values())) == 2
    assert limited[(1, 0)] == limited[(0, 1)]  # closer to (0, 1) than to (0, 0)


def test_reconcile_config_is_validated():
    with pytest.raises(ValueError):
        ReconcileConfig(min_overlap=1.5)
