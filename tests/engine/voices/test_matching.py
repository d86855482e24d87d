"""Which found speaker gets which known name: the threshold, the margin over the second-best
person, one person naming one speaker, and the stretches of speech a speaker is judged on."""

from __future__ import annotations

import numpy as np
import pytest

from engine.types import Utterance
from engine.voices.matching import MatchConfig, match_speakers
from engine.voices.speech import groups, longest_first, own_spans


def unit(*values: float) -> np.ndarray:
    v = np.array(values, np.float32)
    return v / np.linalg.norm(v)


def towards(target: np.ndarray, other: np.ndarray, cosine: float) -> np.ndarray:
    """A unit vector at exactly `cosine` to `target`, turned towards `other`."""
    ortho = other - (other @ target) * target
    ortho /= np.linalg.norm(ortho)
    return (cosine * target + np.sqrt(1 - cosine**2) * ortho).astype(np.float32)


ALICE, BOB, CAROL = unit(1, 0, 0, 0), unit(0, 1, 0, 0), unit(0, 0, 1, 0)
STRANGE = unit(0, 0, 0, 1)


def test_a_speaker_is_named_at_the_threshold_and_not_just_below_it():
    speaker = towards(ALICE, STRANGE, 0.9)
    score = float(ALICE @ speaker)
    named = match_speakers({"S1": speaker}, {"Alice": ALICE}, MatchConfig(threshold=score, margin=0.0))
    assert named["S1"].name == "Alice" and named["S1"].score == score and named["S1"].runner_up is None
    just_above = MatchConfig(threshold=score + 1e-6, margin=0.0)
    assert match_speakers({"S1": speaker}, {"Alice": ALICE}, just_above) == {}


def test_a_speaker_too_close_to_two_people_stays_unnamed():
    config = MatchConfig(threshold=0.5, margin=0.1)
    between = unit(1.0, 0.9, 0, 0)  # cosine 0.74 to Alice, 0.67 to Bob: a lead of 0.07
    clear = unit(1.0, 0.5, 0, 0)  # 0.89 against 0.45
    named = match_speakers({"S1": between, "S2": clear}, {"Alice": ALICE, "Bob": BOB}, config)
    assert {k: m.name for k, m in named.items()} == {"S2": "Alice"}
    assert named["S2"].runner_up == pytest.approx(float(clear @ BOB))


def test_a_lead_of_exactly_the_margin_is_enough():
    speaker = unit(1.0, 0.5, 0, 0)
    lead = float(ALICE @ speaker) - float(BOB @ speaker)
    voices = {"Alice": ALICE, "Bob": BOB}
    assert (
        match_speakers({"S1": speaker}, voices, MatchConfig(threshold=0.0, margin=lead))["S1"].name == "Alice"
    )
    assert match_speakers({"S1": speaker}, voices, MatchConfig(threshold=0.0, margin=lead + 1e-6)) == {}


def test_the_margin_is_measured_against_the_second_best_not_the_worst():
    config = MatchConfig(threshold=0.5, margin=0.1)
    speaker = unit(1.0, 0.9, 0.0, 0)  # Bob second best (lead 0.07), Carol far behind
    assert match_speakers({"S1": speaker}, {"Carol": CAROL, "Alice": ALICE, "Bob": BOB}, config) == {}


def test_one_person_names_only_the_speaker_most_like_them():
    config = MatchConfig(threshold=0.8, margin=0.0)
    closer, further = towards(ALICE, STRANGE, 0.97), towards(ALICE, BOB, 0.95)
    voices = {"Alice": ALICE, "Bob": BOB}
    named = match_speakers({"S1": closer, "S2": further, "S3": BOB}, voices, config)
    assert {k: m.name for k, m in named.items()} == {"S1": "Alice", "S3": "Bob"}
    named = match_speakers({"S2": further, "S1": closer}, voices, config)
    assert {k: m.name for k, m in named.items()} == {"S1": "Alice"}
    tie = match_speakers({"S1": closer, "S2": closer.copy()}, voices, config)  # equal: the first listed
    assert {k: m.name for k, m in tie.items()} == {"S1": "Alice"}


def test_nothing_is_named_without_known_voices_or_speakers():
    assert match_speakers({"S1": ALICE}, {}) == {}
    assert match_speakers({}, {"Alice": ALICE}) == {}


@pytest.mark.parametrize("field", [{"threshold": 1.5}, {"margin": -0.1}, {"min_seconds": -1.0}])
def test_impossible_match_settings_are_refused(field):
    with pytest.raises(ValueError):
        MatchConfig(**field)


def test_a_speakers_own_speech_leaves_out_what_others_say_over_it():
    utterances = [
        Utterance(0.0, 10.0, "", "S1"),
        Utterance(4.0, 5.0, "", "S2"),  # inside S1's turn
        Utterance(9.0, 12.0, "", "S2"),  # overlapping its end
        Utterance(11.9, 14.0, "", "S1"),
        Utterance(13.0, 13.1, "", None),  # no speaker: not another voice
        Utterance(14.0, 14.15, "", "S2"),  # too short to be worth a window
    ]
    assert own_spans(utterances, "S1") == [(0.0, 4.0), (5.0, 9.0), (12.0, 14.0)]
    assert own_spans(utterances, "S2") == [(10.0, 11.9)]
    assert own_spans(utterances, "S9") == []


def test_the_longest_stretches_are_embedded_first_up_to_the_limit_in_time_order():
    spans = [(0.0, 1.0), (2.0, 7.0), (8.0, 10.0), (11.0, 14.0)]
    assert longest_first(spans, 7.0) == [(2.0, 7.0), (11.0, 14.0)]
    assert longest_first(spans, 5.0) == [(2.0, 7.0)]
    assert longest_first(spans, 5.5) == [(2.0, 7.0), (11.0, 14.0)]
    assert longest_first(spans, 100.0) == spans


def test_samples_are_groups_of_about_the_wanted_speech_and_a_short_rest_joins_the_last():
    spans = [(0.0, 6.0), (10.0, 16.0), (20.0, 26.0), (30.0, 32.0)]
    assert groups(spans, 12.0) == [[(0.0, 6.0), (10.0, 16.0)], [(20.0, 26.0), (30.0, 32.0)]]
    assert groups(spans, 3.0) == [[(0.0, 6.0)], [(10.0, 16.0)], [(20.0, 26.0)], [(30.0, 32.0)]]
    assert groups(spans[:3], 12.0) == [[(0.0, 6.0), (10.0, 16.0)], [(20.0, 26.0)]]
    assert groups([], 12.0) == []


def test_match_settings_at_their_bounds_are_taken_and_beyond_them_refused_with_the_rule():
    for fine in ({"threshold": -1.0}, {"threshold": 1.0}, {"margin": 0.0}, {"margin": 2.0},
                 {"min_seconds": 0.0}, {"min_seconds": 0.5}):  # fmt: skip
        MatchConfig(**fine)
    with pytest.raises(ValueError, match=r"cosine similarity in \[-1, 1\], got -1.5"):
        MatchConfig(threshold=-1.5)
    with pytest.raises(ValueError, match=r"margin must be in \[0, 2\], got 2.5"):
        MatchConfig(margin=2.5)
    with pytest.raises(ValueError, match=r"cannot be negative, got -0\.1"):
        MatchConfig(min_seconds=-0.1)


def test_a_stretch_of_exactly_the_shortest_span_is_kept_and_another_voice_after_the_turn_cuts_nothing():
    utterances = [Utterance(0.25, 0.45, "", "S1"), Utterance(1.0, 3.0, "", "S1"),
                  Utterance(5.0, 6.0, "", "S2")]  # fmt: skip
    assert own_spans(utterances, "S1") == [(0.25, 0.45), (1.0, 3.0)]  # 0.2 s: just long enough


def test_a_last_group_under_half_the_size_joins_the_one_before():
    spans = [(0.0, 6.0), (10.0, 16.0), (20.0, 24.0)]  # 12 s, then 4 s: less than half of 12
    assert groups(spans, 12.0) == [[(0.0, 6.0), (10.0, 16.0), (20.0, 24.0)]]
