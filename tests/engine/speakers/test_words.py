"""Word-level speaker assignment for the whisper backend: turns split between words, not inside them."""

from __future__ import annotations

import pytest

from engine.speakers.diarization import Diarization, SpeakerTurn
from engine.speakers.words import WordAssignConfig, assign_words
from engine.types import Utterance, Word


def sentence(*words: tuple[float, float, str]) -> Utterance:
    ws = tuple(Word(a, b, t) for a, b, t in words)
    return Utterance(ws[0].start, ws[-1].end, " ".join(w.text for w in ws), words=ws)


def turns(*spans: tuple[float, float, str]) -> Diarization:
    return Diarization(tuple(SpeakerTurn(a, b, s) for a, b, s in spans))


def said(utterances: list[Utterance]) -> list[tuple[str | None, str]]:
    return [(u.speaker, u.text) for u in utterances]


def test_a_late_diarization_boundary_moves_back_to_the_pause_so_the_next_turn_keeps_its_first_words():
    # ann stops at 2.0, bob starts at 2.6; the diarization only notices bob at 3.1
    words = sentence((0.5, 1.0, "so"), (1.0, 2.0, "anyway"), (2.6, 2.9, "well"), (2.9, 3.4, "actually"),
                     (3.4, 4.0, "no"))  # fmt: skip
    result = assign_words([words], turns((0.4, 3.1, "ann"), (3.1, 4.1, "bob")))
    assert said(result) == [("ann", "so anyway"), ("bob", "well actually no")]


def test_an_early_boundary_moves_forward_to_the_pause():
    words = sentence((0.0, 0.5, "we"), (0.5, 1.0, "should"), (1.0, 1.5, "go"), (2.2, 2.6, "okay"))
    result = assign_words([words], turns((0.0, 1.2, "ann"), (1.2, 2.7, "bob")))
    assert said(result) == [("ann", "we should go"), ("bob", "okay")]


def test_the_boundary_stays_put_when_no_pause_is_near():
    words = sentence(*[(i * 0.3, i * 0.3 + 0.3, f"w{i}") for i in range(12)])
    result = assign_words(
        [words], turns((0.0, 1.8, "ann"), (1.8, 3.6, "bob")), WordAssignConfig(max_shift=0.3)
    )
    assert [u.speaker for u in result] == ["ann", "bob"] and result[1].text.startswith("w6")


def test_a_word_in_overlapping_speech_goes_to_the_turn_it_overlaps_most():
    words = sentence((0.0, 1.0, "long"), (1.0, 1.9, "sentence"), (2.5, 3.0, "yes"))
    # ann talks until 2.0 and bob from 1.7: "sentence" overlaps ann 0.9 s and bob 0.2 s
    result = assign_words([words], turns((0.0, 2.0, "ann"), (1.7, 3.2, "bob")), WordAssignConfig(max_shift=0))
    assert said(result) == [("ann", "long sentence"), ("bob", "yes")]


def test_a_word_covered_equally_by_two_turns_stays_with_the_speaker_before_it():
    words = sentence((0.0, 0.8, "keep"), (0.9, 1.3, "talking"), (1.4, 1.8, "please"))
    # bob's turn covers the last two words as fully as ann's does
    result = assign_words(
        [words], turns((0.0, 2.0, "ann"), (0.85, 2.0, "bob")), WordAssignConfig(max_shift=0)
    )
    assert said(result) == [("ann", "keep talking please")]


def test_a_word_outside_every_turn_takes_the_nearest_turn():
    result = assign_words([sentence((5.0, 5.4, "hello"))], turns((0.0, 1.0, "ann"), (6.0, 7.0, "bob")))
    assert said(result) == [("bob", "hello")]


def test_utterances_are_reformed_at_sentence_ends_and_keep_their_word_times():
    words = sentence((0.0, 0.4, "Yes."), (0.5, 0.9, "Go"), (0.9, 1.3, "on."))
    result = assign_words([words], turns((0.0, 2.0, "ann")))
    assert said(result) == [("ann", "Yes."), ("ann", "Go on.")]
    assert result[1].words == (Word(0.5, 0.9, "Go"), Word(0.9, 1.3, "on.")) and result[1].start == 0.5


def test_utterances_without_word_times_are_assigned_whole():
    plain = Utterance(1.0, 2.0, "no word times here")
    assert said(assign_words([plain], turns((0.5, 2.5, "ann")))) == [("ann", "no word times here")]
    assert assign_words([plain], turns((0.5, 2.5, "ann")))[0].words == ()


def test_without_any_turn_everything_goes_to_one_speaker():
    assert {u.speaker for u in assign_words([sentence((0, 1, "hi"))], Diarization(()))} == {"E0"}


def test_word_assignment_config_is_validated():
    with pytest.raises(ValueError):
        WordAssignConfig(max_shift=-1)


@pytest.mark.parametrize("field", ["max_shift", "sentence_bonus", "tie"])
def test_each_word_assignment_duration_is_checked_on_its_own_and_zero_is_allowed(field):
    WordAssignConfig(max_shift=0, sentence_bonus=0, tie=0)
    with pytest.raises(ValueError, match=r"^word assignment durations must be non-negative$"):
        WordAssignConfig(**{field: -0.01})


def test_a_word_inside_a_long_turn_and_a_later_shorter_one_goes_to_the_later_one():
    # ann's long turn covers bob's short interjection; cy speaks much later
    diarization = turns((0.0, 10.0, "ann"), (4.0, 6.0, "bob"), (20.0, 21.0, "cy"))
    for config in (WordAssignConfig(max_shift=0), WordAssignConfig(max_shift=0, tie=0)):
        result = assign_words([sentence((4.5, 5.0, "sorry"))], diarization, config)
        assert said(result) == [("bob", "sorry")]


def test_utterances_given_out_of_order_come_back_in_time_order_split_where_each_ended():
    late, early = (
        sentence((3.0, 3.5, "and"), (3.5, 4.0, "then")),
        sentence((0.0, 0.5, "first"), (0.5, 2.5, "this")),
    )
    result = assign_words([late, early], turns((0.0, 5.0, "ann")))
    assert said(result) == [("ann", "first this"), ("ann", "and then")]  # no sentence end, yet two lines
    assert [(u.start, u.end) for u in result] == [(0.0, 2.5), (3.0, 4.0)]


def test_a_change_of_speaker_after_the_first_word_moves_to_the_pause_too():
    words = sentence((0.0, 0.3, "so"), (0.35, 0.6, "yeah"), (1.3, 1.6, "well"), (1.6, 2.0, "maybe"))
    result = assign_words([words], turns((0.0, 0.33, "ann"), (0.33, 2.0, "bob")))
    assert said(result) == [("ann", "so yeah"), ("bob", "well maybe")]


def test_a_sentence_end_wins_over_a_slightly_wider_pause_mid_sentence():
    words = sentence((0.0, 0.3, "We"), (0.3, 0.75, "agree."), (1.0, 1.3, "Then"), (1.6, 1.9, "next"),
                     (1.9, 2.3, "week"))  # fmt: skip
    # pauses: 0.25 s after "agree." (+0.15 for the sentence end) and 0.3 s after "Then"
    result = assign_words([words], turns((0.0, 1.4, "ann"), (1.4, 2.5, "bob")))
    assert said(result) == [("ann", "We agree."), ("bob", "Then next week")]


def test_of_two_equal_pauses_the_change_moves_to_the_nearer_one():
    words = sentence((0.0, 0.25, "a"), (0.25, 0.5, "b"), (1.0, 1.25, "c"), (1.25, 1.5, "d"), (1.5, 1.75, "e"),
                     (2.25, 2.5, "f"), (2.5, 2.75, "g"))  # fmt: skip
    # half-second pauses before "c" and before "f"; the diarization changes before "e"
    result = assign_words([words], turns((0.0, 1.5, "ann"), (1.5, 3.0, "bob")))
    assert said(result) == [("ann", "a b c d e"), ("bob", "f g")]


def test_a_one_word_interjection_keeps_its_word_when_the_next_change_moves():
    words = sentence((0.0, 0.25, "so"), (0.25, 0.5, "then"), (1.0, 1.25, "what"), (1.25, 1.5, "about"),
                     (1.75, 2.0, "the"), (2.0, 2.25, "budget"))  # fmt: skip
    # bob's short turn: "what" is his; moving his end to the pause after "about" must not reach back
    # across the change before "what" (to the wider pause before it)
    result = assign_words([words], turns((0.0, 1.1, "ann"), (1.1, 1.3, "bob"), (1.3, 3.0, "ann")))
    assert said(result) == [("ann", "so then"), ("bob", "what about"), ("ann", "the budget")]
