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
