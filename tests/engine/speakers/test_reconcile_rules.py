"""Cross-chunk reconciliation, rule by rule, on hand-built evidence.

Each chunk-local speaker is given directly as `LocalSpeaker` evidence: an embedding placed at an
angle in a plane (so the cosine similarity of two speakers is the cosine of the angle between
them), a diarization overlap share, or both. Every test asserts which global speaker each local
speaker ends up with, which is what a reader of the transcript sees.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

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
from engine.types import Chunk, ChunkResult, Segment


def at(degrees: float) -> np.ndarray:
    """A unit embedding at `degrees` in the first plane: cos(a - b) alike to one `at(b)`."""
    r = math.radians(degrees)
    return np.array([math.cos(r), math.sin(r), 0.0], dtype=np.float32)


def speaker(
    chunk: int,
    local: int = 0,
    embedding: np.ndarray | None = None,
    *,
    seconds: float = 5.0,
    overlaps: dict[str, float] | None = None,
) -> LocalSpeaker:
    return LocalSpeaker(chunk, local, chunk * 10.0 + local, seconds, overlaps, embedding)


def together(speaker_map, *keys) -> bool:
    return len({speaker_map[k] for k in keys}) == 1


# --- the configuration ---


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"min_overlap": 0.0}, "^min overlap"),
        ({"min_overlap": 1.0}, "^min overlap"),
        ({"min_similarity": -1.0}, "^min similarity"),
        ({"min_similarity": 1.0}, "^min similarity"),
        ({"short_seconds": -0.5}, "^short-speech"),
        ({"short_slack": -0.1}, "^short-speech"),
        ({"min_similarity": 0.5, "short_slack": 1.5}, "^short-speech"),  # the bar could reach -1
        ({"passes": -1}, "^refinement passes"),
    ],
)
def test_a_reconcile_setting_out_of_range_is_refused_and_named(fields, message):
    with pytest.raises(ValueError, match=message):
        ReconcileConfig(**fields)


@pytest.mark.parametrize(
    "fields",
    [
        {"min_overlap": 0.01},
        {"min_overlap": 0.99},
        {"min_similarity": -0.99, "short_slack": 0.0},
        {"min_similarity": 0.99},
        {"short_seconds": 0.0},
        {"short_slack": 0.0},
        {"min_similarity": 0.5, "short_slack": 1.49},
        {"passes": 0},
    ],
)
def test_reconcile_settings_at_the_edge_of_their_range_are_accepted(fields):
    ReconcileConfig(**fields)


# --- evidence from a chunk's segments ---


def result(index: int, start: float, *segments: tuple[float, float, int | None]) -> ChunkResult:
    chunk = Chunk(index, start, start + 30.0)
    return ChunkResult(chunk, tuple(Segment(a, b, "words", who) for a, b, who in segments))


def test_local_spans_are_absolute_and_leave_out_segments_without_a_speaker():
    results = [result(0, 0.0, (1, 2, 0), (3, 4, None), (5, 6, 0)), result(1, 30.0, (1, 2, 0))]
    assert local_spans(results) == {(0, 0): [(1.0, 2.0), (5.0, 6.0)], (1, 0): [(31.0, 32.0)]}


def test_exclusive_spans_drop_the_time_another_speaker_of_the_same_chunk_talks_over():
    spans = {(0, 0): [(0.0, 4.0)], (0, 1): [(1.0, 2.0)], (1, 0): [(0.0, 4.0)], (1, 1): [(3.0, 4.0)]}
    assert exclusive_spans(spans) == {
        (0, 0): [(0.0, 1.0), (2.0, 4.0)],  # cut around speaker 1's turn, not around chunk 1's
        (0, 1): [],  # all of it is shared
        (1, 0): [(0.0, 3.0)],
        (1, 1): [],
    }


def test_a_piece_left_after_overlap_is_kept_however_short():
    assert exclusive_spans({(0, 0): [(0.0, 1.0)], (0, 1): [(0.5, 1.0)]})[(0, 0)] == [(0.0, 0.5)]


def test_evidence_is_ordered_by_chunk_then_first_words_and_measures_speech_and_overlap():
    spans = {
        (1, 0): [(30.0, 31.0)],
        (0, 0): [(4.0, 5.0), (8.0, 10.0)],
        (0, 1): [(1.0, 1.5)],
        (1, 1): [(3.0, 3.5)],  # chunks overlap: a speaker of chunk 1 may start before one of chunk 0
    }
    diarization = Diarization((SpeakerTurn(0.0, 4.5, "A"), SpeakerTurn(4.5, 20.0, "B")))
    embeddings = {(0, 0): at(0), (1, 0): None}
    evidence = gather_evidence(spans, diarization, embeddings)
    assert [(e.chunk, e.local) for e in evidence] == [(0, 1), (0, 0), (1, 1), (1, 0)]
    first = evidence[1]
    assert first.first == 4.0 and first.seconds == pytest.approx(3.0)
    assert first.overlaps == pytest.approx({"A": 0.5 / 3, "B": 2.5 / 3})
    assert first.embedding is embeddings[(0, 0)] and evidence[0].embedding is None
    assert evidence[0].overlaps == {"A": 1.0}  # half a second, all of it A's
    assert evidence[3].overlaps == {}  # nobody in the diarization speaks then


def test_an_overlap_share_never_exceeds_the_whole_of_a_speakers_time():
    # a diarization that lists one person twice over the same second
    diarization = Diarization((SpeakerTurn(0.0, 2.0, "A"), SpeakerTurn(1.0, 3.0, "A")))
    (evidence,) = gather_evidence({(0, 0): [(0.0, 3.0)]}, diarization)
    assert evidence.overlaps == {"A": 1.0}


def test_evidence_without_a_diarization_or_embeddings_carries_neither():
    (evidence,) = gather_evidence({(0, 0): [(0.0, 3.0)]})
    assert evidence.overlaps is None and evidence.embedding is None


def test_majority_mapping_sends_each_local_speaker_to_the_diarization_speaker_it_overlaps_most():
    results = [result(0, 0.0, (0, 4, 0), (4, 5, 1), (20, 21, 2))]
    diarization = Diarization((SpeakerTurn(0.0, 1.0, "B"), SpeakerTurn(1.0, 6.0, "A")))
    assert majority_map(results, diarization) == {(0, 0): "A", (0, 1): "A"}  # (0, 2): nobody then


# --- one chunk at a time: diarization overlap ---


def test_a_speaker_exactly_at_the_overlap_bar_is_not_enough_to_join_a_diarization_speaker():
    evidence = [speaker(0, overlaps={"A": 1.0}), speaker(1, overlaps={"A": 0.3})]
    speaker_map = reconcile(evidence, ReconcileConfig(min_overlap=0.3))
    assert speaker_map[(1, 0)] != speaker_map[(0, 0)]
    joined = reconcile([evidence[0], speaker(1, overlaps={"A": 0.31})], ReconcileConfig(min_overlap=0.3))
    assert together(joined, (0, 0), (1, 0))


def test_a_speaker_the_diarization_never_heard_opens_its_own_speaker():
    evidence = [speaker(0, overlaps={"A": 1.0}), speaker(1, overlaps={})]
    speaker_map = reconcile(evidence)
    assert speaker_map == {(0, 0): "G1", (1, 0): "G2"}


def test_a_diarization_speaker_nobody_matched_leaves_no_gap_in_the_numbering():
    evidence = [speaker(0, overlaps={"B": 0.9}), speaker(1, overlaps={"B": 0.2, "C": 0.8})]
    assert reconcile(evidence) == {(0, 0): "G1", (1, 0): "G2"}  # "A" matched nobody (absent here)


# --- one chunk at a time: embeddings ---


@pytest.mark.parametrize(
    ("seconds", "angle", "joins"),
    [
        (5.0, 35.0, True),  # cos 35° = 0.82: above the bar
        (5.0, 45.0, False),  # 0.71: below it
        (1.5, 48.0, True),  # half the 3 s allowance lowers the bar by 0.15 to 0.65: cos 48° = 0.67
        (1.5, 52.0, False),  # 0.62
        (3.0, 40.0, False),  # 0.77: at exactly 3 s nothing is lowered
        (0.0, 58.0, True),  # no speech at all: the whole 0.3 off, bar 0.5; cos 58° = 0.53
        (0.0, 62.0, False),  # 0.47
    ],
)
def test_short_speech_lowers_the_similarity_bar_in_proportion(seconds, angle, joins):
    evidence = [speaker(0, embedding=at(0)), speaker(1, embedding=at(angle), seconds=seconds)]
    assert together(reconcile(evidence), (0, 0), (1, 0)) is joins


def test_without_a_short_speech_allowance_a_short_speaker_meets_the_full_bar():
    evidence = [speaker(0, embedding=at(0)), speaker(1, embedding=at(40), seconds=1.0)]  # 0.77
    assert together(reconcile(evidence), (0, 0), (1, 0))  # bar 0.6 for 1 s of speech
    assert not together(reconcile(evidence, ReconcileConfig(short_seconds=0.0)), (0, 0), (1, 0))


def test_an_allowance_under_a_second_still_lowers_the_bar():
    evidence = [speaker(0, embedding=at(0)), speaker(1, embedding=at(40), seconds=0.5)]  # 0.77
    assert together(reconcile(evidence, ReconcileConfig(short_seconds=1.0)), (0, 0), (1, 0))  # bar 0.65


def test_speech_the_diarization_missed_is_matched_by_voice_alone_without_a_penalty():
    # neither speaker overlaps anyone in the diarization: only the voice (cos 0.70, 1 s: bar 0.6) counts
    evidence = [
        speaker(0, embedding=at(0), overlaps={}),
        speaker(1, embedding=at(math.degrees(math.acos(0.7))), seconds=1.0, overlaps={}),
    ]
    assert together(reconcile(evidence), (0, 0), (1, 0))


def test_a_speaker_with_no_voice_evidence_is_never_glued_to_another():
    # too short to embed: nothing says who it is, so it stays apart even under a speaker limit
    evidence = [speaker(0, embedding=at(0)), speaker(1), speaker(2, embedding=at(5))]
    for count in (None, SpeakerCount(maximum=1)):
        speaker_map = reconcile(evidence, count=count)
        assert speaker_map == {(0, 0): "G1", (1, 0): "G2", (2, 0): "G1"}


# --- both kinds of evidence: the mean of their margins ---


@pytest.mark.parametrize(
    ("share", "similarity", "seconds", "joins"),
    [
        (0.4, 0.56, 5.0, True),  # overlap +0.14, voice -0.13
        (0.4, 0.48, 5.0, False),  # overlap +0.14, voice -0.18
        (0.2, 0.78, 1.5, True),  # overlap -0.33, voice +0.37 (1.5 s of speech: bar 0.65)
        (0.2, 0.75, 1.5, False),  # overlap -0.33, voice +0.29
        (1.0, -1.0, 5.0, False),  # overlap +1, voice -1: a tie is not a match
    ],
)
def test_overlap_and_voice_are_weighed_together(share, similarity, seconds, joins):
    evidence = [
        speaker(0, embedding=at(0), overlaps={"A": 1.0}),
        speaker(1, embedding=at(math.degrees(math.acos(similarity))), seconds=seconds, overlaps={"A": share}),
    ]
    assert together(reconcile(evidence), (0, 0), (1, 0)) is joins


# --- refinement against the final voices ---


def test_refinement_undoes_a_voice_drifting_while_chunks_join_in_order_one_pass_at_a_time():
    # in order all four join one speaker: 30° is near 0° (cos 0.87), and 50° near their mean, 15°
    # (0.82); the first pass sends 50° off on its own (cos 0.77 against the others' mean, 10°), and
    # only the second can then move 30° to it (cos 0.94 against 0.87 for the two at 0°)
    evidence = [speaker(i, embedding=at(angle)) for i, angle in enumerate((0, 30, 50, 0))]
    assert set(reconcile(evidence, ReconcileConfig(passes=0)).values()) == {"G1"}
    assert reconcile(evidence, ReconcileConfig(passes=1)) == {
        (0, 0): "G1",
        (1, 0): "G1",
        (2, 0): "G2",
        (3, 0): "G1",
    }
    assert reconcile(evidence) == {(0, 0): "G1", (1, 0): "G2", (2, 0): "G2", (3, 0): "G1"}


def test_a_longer_speaker_weighs_more_in_the_voice_a_new_chunk_is_compared_with():
    # 3 s at 0° and 0.2 s at 50° (joined: so little speech lowers the bar to 0.52) make a voice near
    # 3°, which a 5 s speaker at -33° resembles (cos 0.81); the plain mean (25°) it would not (0.53)
    evidence = [
        speaker(0, embedding=at(0), seconds=3.0),
        speaker(1, embedding=at(50), seconds=0.2),
        speaker(2, embedding=at(-33)),
    ]
    speaker_map = reconcile(evidence, ReconcileConfig(passes=0))
    assert together(speaker_map, (0, 0), (1, 0), (2, 0))


def test_a_voice_first_heard_for_half_a_second_is_recognised_when_it_speaks_longer():
    evidence = [speaker(0, embedding=at(0), seconds=0.5), speaker(1, embedding=at(30))]  # cos 0.87
    assert together(reconcile(evidence), (0, 0), (1, 0))


# --- merging speakers who never meet ---


def test_speakers_exactly_as_alike_as_the_bar_are_merged():
    evidence = [
        speaker(0, embedding=np.array([1.0, 0.0, 0.0])),
        speaker(1, embedding=np.array([0.0, 1.0, 0.0])),
    ]
    assert reconcile(evidence, ReconcileConfig(min_similarity=0.0)) == {(0, 0): "G1", (1, 0): "G1"}


def test_an_exact_speaker_count_merges_the_most_alike_speakers_that_never_meet():
    evidence = [speaker(0, embedding=at(0)), speaker(1, embedding=at(100)), speaker(2, embedding=at(60))]
    assert len(set(reconcile(evidence).values())) == 3
    assert reconcile(evidence, count=SpeakerCount(exact=2)) == {(0, 0): "G1", (1, 0): "G2", (2, 0): "G2"}


def test_a_speaker_limit_merges_no_further_than_the_limit():
    evidence = [speaker(0, embedding=at(0)), speaker(1, embedding=at(120)), speaker(2, embedding=at(240))]
    assert len(set(reconcile(evidence, count=SpeakerCount(maximum=2)).values())) == 2


def test_speakers_who_talk_in_the_same_chunk_are_never_merged_whatever_the_limit():
    evidence = [speaker(0, 0, at(0)), speaker(0, 1, at(10)), speaker(0, 2, at(20))]
    assert len(set(reconcile(evidence, count=SpeakerCount(maximum=1)).values())) == 3


def test_a_speaker_limit_looks_past_a_pair_that_meets_for_the_most_alike_pair_that_does_not():
    # chunk 0's two speakers may not merge; chunk 1's (40°) is nearer the first (cos 0.77) than the
    # second (0.64), though below the bar
    evidence = [speaker(0, 0, at(0)), speaker(0, 1, at(90)), speaker(1, 0, at(40))]
    assert len(set(reconcile(evidence).values())) == 3
    assert reconcile(evidence, count=SpeakerCount(maximum=2)) == {(0, 0): "G1", (0, 1): "G2", (1, 0): "G1"}


def test_when_two_pairs_are_equally_alike_the_earlier_heard_pair_is_merged():
    # 53° and -53° are exactly as alike to 0°: the speaker heard first of the two joins it
    evidence = [speaker(0, embedding=at(0)), speaker(1, embedding=at(53)), speaker(2, embedding=at(-53))]
    speaker_map = reconcile(evidence, count=SpeakerCount(maximum=2))
    assert speaker_map == {(0, 0): "G1", (1, 0): "G1", (2, 0): "G2"}


def test_two_diarization_speakers_are_never_merged_however_alike_their_voices():
    evidence = [
        speaker(0, embedding=at(0), overlaps={"A": 1.0}),
        speaker(1, embedding=at(0), overlaps={"B": 1.0}),
    ]
    for count in (None, SpeakerCount(maximum=1)):
        assert reconcile(evidence, count=count) == {(0, 0): "G1", (1, 0): "G2"}


def test_a_speaker_merged_into_a_diarization_speaker_keeps_that_identity_apart_from_the_others():
    # chunk 2's speaker is silent in the diarization, so it opens a speaker of its own; the limit then
    # merges it into A, whose voice it is nearer (cos 0.79 against 0.74), and A still may not merge with B
    evidence = [
        speaker(0, embedding=at(0), overlaps={"A": 1.0}),
        speaker(1, embedding=at(80), overlaps={"B": 1.0}),
        speaker(2, embedding=at(38), overlaps={}),
    ]
    assert reconcile(evidence) == {(0, 0): "G1", (1, 0): "G2", (2, 0): "G3"}
    assert reconcile(evidence, count=SpeakerCount(maximum=1)) == {(0, 0): "G1", (1, 0): "G2", (2, 0): "G1"}
