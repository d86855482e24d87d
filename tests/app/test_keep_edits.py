"""Lines the user edited survive what replaces them (`app.keep_edits`): word by word, their own
speaker or the final one, every speaker named in the book, one undo step."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtGui import QUndoStack

from app import commands, keep_edits
from app import speakers as sp
from app.keep_edits import keep_edited, merged, overlaid, with_speakers
from app.transcript_model import TranscriptModel
from engine.types import Transcript, Utterance, Word


def line(start: float, text: str, speaker: str | None = "A") -> Utterance:
    words = tuple(Word(start + i * 0.5, start + i * 0.5 + 0.4, w) for i, w in enumerate(text.split()))
    return Utterance(start, words[-1].end, text, speaker, words)


def test_a_line_over_others_takes_the_words_it_covers_and_keeps_its_own_speaker():
    base = (line(0.0, "one two three four"), line(5.0, "five six"))  # word middles 0.2, 0.7, 1.2, 1.7
    mine = Utterance(0.6, 1.2, "TWO", "B")  # covers the middle of "two" only (1.2 is its end)
    result = overlaid(base, [mine])
    assert [(u.text, u.speaker) for u in result] == [("one three four", "A"), ("TWO", "B"), ("five six", "A")]
    assert [u.start for u in result] == sorted(u.start for u in result)


def test_a_line_without_word_times_stays_whole_beside_an_edited_line():
    bare = Utterance(0.0, 4.0, "a line a server sent", "A")
    mine = Utterance(1.0, 2.0, "mine", "B")
    assert [u.text for u in overlaid((bare,), [mine])] == ["a line a server sent", "mine"]


def test_a_base_line_whose_every_word_is_covered_gives_way_whole():
    assert [u.text for u in overlaid((line(0.0, "one two"),), [Utterance(0.0, 1.0, "ONE TWO", "B")])] == [
        "ONE TWO"
    ]


def test_speakers_the_lines_name_join_the_book_once_each_with_free_colours():
    book = (sp.SpeakerInfo("A", "Ada", "#1F77B4"),)
    grown = with_speakers(
        book, [line(0.0, "x", "A"), line(1.0, "y", "S7"), line(2.0, "z", "S7"), line(3.0, "w", None)]
    )
    assert [(s.id, s.name) for s in grown] == [("A", "Ada"), ("S7", "S7")]
    assert grown[1].color != "#1F77B4" and grown[0] is book[0]


def test_keeping_edited_lines_after_a_final_run_is_one_undo_step_back_to_the_run(qapp):
    model = TranscriptModel(QUndoStack())
    final = (line(0.0, "the final run's words"), line(9.0, "and more"))
    model.set_document(final, with_speakers((), final), Transcript(final, duration=20.0))
    keep_edited(model, [Utterance(0.0, 1.4, "My fixed words", "Z")])
    assert [u.text for u in model.utterances] == ["My fixed words", "words", "and more"]
    assert model.utterances[0].speaker == "A", "the final speaker it overlaps most replaces the live label"
    assert model.meta.duration == 20.0
    assert (
        model.undo_stack.count() == 1 and model.undo_stack.undoText() == "Keep lines edited while recording"
    )
    model.undo_stack.undo()
    assert model.utterances == final
    commands.edit_text(model, 0, "x")  # the model is still an ordinary editable one


def test_a_line_that_gave_words_away_keeps_the_rest_with_their_times():
    base = (line(0.0, "one two three four"),)  # word middles 0.2, 0.7, 1.2, 1.7
    result = overlaid(base, [Utterance(0.2, 0.9, "ONE, TWO", "B")])  # from the first word's middle
    rest = result[1]
    assert [w.text for w in rest.words] == ["three", "four"], (
        "a word whose middle is the line's start is inside"
    )
    assert (rest.start, rest.end, rest.text) == (1.0, 1.9, "three four")


def test_an_edited_line_no_final_line_overlaps_keeps_its_own_speaker_and_joins_the_book(qapp):
    model = TranscriptModel(QUndoStack())
    final = (line(0.0, "early words"), line(30.0, "late words"))
    model.set_document(final, with_speakers((), final), Transcript(final, duration=40.0))
    keep_edited(model, [Utterance(10.0, 12.0, "In the gap nobody transcribed", "Z")])
    gap = model.utterances[1]
    assert (gap.text, gap.speaker) == ("In the gap nobody transcribed", "Z")
    assert [s.id for s in model.book] == ["A", "Z"]
    assert merged((), [gap]) == (gap,), "with no final lines at all"


def test_a_long_edited_line_that_began_well_before_a_final_line_still_takes_its_words():
    # catches: only edited lines that start within a final line looked at (the lines the user
    # merged into one long line came back beside it, twice over)
    final = (line(0.0, "first line here"), line(40.0, "second line here"), line(80.0, "third line here"))
    mine = Utterance(0.0, 60.0, "first and second, merged and fixed", "B")
    expected = ["first and second, merged and fixed", "third line here"]
    assert [u.text for u in merged(final, [mine])] == expected
    assert [u.text for u in overlaid(final, [mine])] == expected
    # and: edited lines found by their starts, not their ends (two short lines a time edit left
    # inside the long one end before it does)
    nested = [mine, Utterance(45.0, 46.0, "nested", "B"), Utterance(50.0, 51.0, "also nested", "B")]
    assert [u.text for u in merged(final, nested)] == [expected[0], "nested", "also nested", expected[1]]


def test_a_final_line_that_began_well_before_an_edited_one_gives_it_its_speaker():
    # catches: only final lines that start within the edited line looked at for its speaker
    final = (line(0.0, " ".join(["word"] * 100), "F"), line(60.0, "later words", "G"))
    assert merged(final, [Utterance(30.0, 31.0, "fixed", "live")])[1].speaker == "F"
    # and: the one it overlaps most, though another holds its end
    final = (line(0.0, " ".join(["word"] * 17), "F"), line(9.0, "and more words after", "G"))  # 0–8.4, 9–10.9
    assert merged(final, [Utterance(0.0, 10.0, "fixed", "live")])[0].speaker == "F"


def test_a_long_recordings_run_end_compares_each_line_only_with_the_edited_lines_near_it(monkeypatch):
    # catches: every final line matched against every edited one (2,001 lines × 100 edited took
    # 155 ms of the window's thread at a run's end; a count, not a clock, since machines are noisy)
    calls = 0
    plain = keep_edits.overlap

    def counted(a: Utterance, b: Utterance) -> float:
        nonlocal calls
        calls += 1
        return plain(a, b)

    monkeypatch.setattr(keep_edits, "overlap", counted)
    final = tuple(line(10.0 * i, "a few words here", f"S{i % 3}") for i in range(2001))
    edited = [Utterance(10.0 * i + 1.0, 10.0 * i + 1.5, "fixed", "S1") for i in range(0, 2000, 20)]
    result = merged(final, edited)
    assert len(result) == 2001 + 100 and calls < 10 * (2001 + 100)


def test_lines_close_in_time_that_do_not_overlap_leave_each_other_as_they_were():
    # catches: a line that only comes near an edited one (ends just before it) rebuilt from its
    # words (its trailing silence cut, its text respelled), or giving its speaker to the edited line
    before = replace(line(0.0, "one two three"), end=2.0, text="One, two, three.")  # words end at 1.4
    after = line(3.0, "a later line of ten words that runs on longer", "C")  # 4.9 s: the searches
    mine = Utterance(2.0, 2.9, "mine between them", "Z")  # reach back over `before`, which ends at 2.0
    result = merged((before, after), [mine])
    assert result == (before, replace(mine, speaker="Z"), after)
    assert overlaid((before, after), [mine]) == (before, mine, after)


def test_a_line_whose_last_words_were_given_away_ends_at_its_last_kept_word():
    # catches: the line's old end kept when its end words went to an edited line
    rest = overlaid((line(0.0, "one two three four"),), [Utterance(1.0, 2.0, "THREE FOUR", "B")])[0]
    assert (rest.text, rest.start, rest.end) == ("one two", 0.0, 0.9)
