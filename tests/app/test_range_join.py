"""A re-transcribed range joins its neighbours: whole lines only, the user's speakers kept."""

from __future__ import annotations

from app.range_join import attribute, lines_in, widen
from engine.types import Utterance, Word


def _line(start: float, text: str, speaker: str | None, step: float = 0.4) -> Utterance:
    words = tuple(Word(start + step * i, start + step * i + 0.3, w) for i, w in enumerate(text.split()))
    return Utterance(start, words[-1].end, text, speaker, words)


OLD = (
    _line(18.7, "the flights are booked but we still need a hotel", "S1"),  # 18.7–22.6
    _line(22.6, "I'd like to bring one of the new engineers", "S4"),  # 22.6–26.1
    _line(26.5, "who decides", "S3"),
)


def test_a_range_that_cuts_a_line_grows_to_the_whole_line_and_lines_chained_to_it():
    assert widen(OLD, 20.0, 23.0) == (18.7, OLD[1].end)
    assert lines_in(OLD, 18.7, OLD[1].end) == range(0, 2)
    assert widen(OLD, 30.0, 31.0) == (30.0, 31.0) and lines_in(OLD, 30.0, 31.0) == range(3, 3)


def test_one_new_line_spanning_two_peoples_turns_is_cut_between_them_with_their_speakers():
    words = OLD[0].words + OLD[1].words  # the range's diarization heard one voice
    merged = Utterance(18.7, OLD[1].end, "x", "+A", words)
    new = attribute([merged], OLD[:2])
    assert [(u.speaker, u.text) for u in new] == [
        ("S1", "The flights are booked but we still need a hotel"),
        ("S4", "I'd like to bring one of the new engineers"),
    ]
    assert new[0].words == OLD[0].words and new[1].start == OLD[1].words[0].start


def test_words_no_old_line_covers_keep_the_matched_new_speaker():
    far = _line(40.0, "something new", "+B")
    assert attribute([far], OLD) == (far,)
