"""The names a user gave speakers go to the new run's speakers that took their place, and only
where the pairing is clear (`app.carry_names`)."""

from __future__ import annotations

from app import speakers as sp
from app.carry_names import named_book
from app.undo_commands import Document
from engine.types import Speaker, Transcript, Utterance


def lines(*turns: tuple[float, float, str]) -> tuple[Utterance, ...]:
    return tuple(Utterance(start, end, "words", who) for start, end, who in turns)


def before(turns: tuple[Utterance, ...], *names: tuple[str, str, float | None]) -> Document:
    book = tuple(sp.SpeakerInfo(sid, name, sp.palette_color(i), score)
                 for i, (sid, name, score) in enumerate(names))  # fmt: skip
    return Document(turns, book, Transcript(()))


def run(turns: tuple[Utterance, ...], *speakers: Speaker) -> Transcript:
    return Transcript(turns, speakers)


MEETING_BEFORE = lines((0, 10, "A"), (10, 20, "B"), (20, 30, "A"), (30, 34, "C"))
MEETING_AGAIN = lines((0, 10.4, "S1"), (10.4, 20, "S2"), (20, 29.5, "S1"), (29.5, 34, "S3"))


def test_names_given_before_the_run_go_to_the_speakers_that_took_their_place():
    old = before(MEETING_BEFORE, ("A", "Alice", None), ("B", "Bob", None), ("C", "Speaker 3", None))
    new = run(MEETING_AGAIN, Speaker("S1", "Speaker 1"), Speaker("S2", "Speaker 2"), Speaker("S3", "S3"))
    book, carried = named_book(new, old, old.book)
    assert [s.name for s in book] == ["Alice", "Bob", "S3"], "a default label is not the user's name"
    assert carried == ["Alice", "Bob"]


def test_a_rename_during_the_run_counts_and_a_recognised_voice_keeps_its_own_name():
    old = before(MEETING_BEFORE, ("A", "Alicia", None), ("B", "Speaker 2", None), ("C", "Speaker 3", None))
    now = sp.rename(sp.rename(old.book, "A", "Alice"), "B", "Robert")  # renamed while the run went on
    new = run(MEETING_AGAIN, Speaker("S1", "S1"), Speaker("S2", "Bob", 0.93), Speaker("S3", "S3"))
    book, carried = named_book(new, old, now)
    assert [(s.name, s.score) for s in book] == [("Alice", None), ("Bob", 0.93), ("S3", None)]
    assert carried == ["Alice"]


def test_no_name_for_a_person_the_new_run_splits_or_for_two_people_it_merges():
    old = before(lines((0, 10, "A"), (10, 20, "B"), (20, 40, "C")),
                 ("A", "Alice", None), ("B", "Bob", None), ("C", "Carol", None))  # fmt: skip
    new = run(lines((0, 20, "S1"), (20, 30, "S2"), (30, 40, "S3")))  # Alice+Bob merged, Carol split
    book, carried = named_book(new, old, old.book)
    assert [s.name for s in book] == ["S1", "S2", "S3"] and carried == []


def test_a_cancelled_runs_few_lines_still_name_the_speakers_of_the_whole_new_run():
    old = before(lines((0, 10, "A"), (10, 14, "B")), ("A", "Alice", None), ("B", "Bob", None))
    new = run(lines((0, 10, "S1"), (10, 14, "S2"), (14, 200, "S1"), (200, 300, "S2")))
    book, carried = named_book(new, old, old.book)
    assert [s.name for s in book] == ["Alice", "Bob"] and carried == ["Alice", "Bob"]


def test_a_name_already_in_the_new_book_is_not_given_twice_and_nothing_without_a_run_before():
    old = before(MEETING_BEFORE, ("A", "Alice", None), ("B", "Bob", None))
    new = run(MEETING_AGAIN, Speaker("S1", "S1"), Speaker("S2", "Alice", 0.95), Speaker("S3", "S3"))
    book, carried = named_book(new, old, old.book)
    assert [s.name for s in book] == ["S1", "Alice", "S3"] and carried == []
    assert named_book(new, None, old.book)[1] == []


def test_a_speaker_keeps_its_colour_and_nobody_is_named_without_shared_time_or_old_speakers():
    old = before(lines((0, 10, "A")), ("A", "Alice", None))
    recolored = (sp.SpeakerInfo("S1", "Alice", "#123456"),)
    book, carried = named_book(run(lines((20, 30, "S1"))), old, (*old.book, *recolored))
    assert [(s.name, s.color) for s in book] == [("S1", "#123456")] and carried == [], "no time in common"
    unassigned = before(lines((0, 10, "")), ("A", "Alice", None))
    assert named_book(run(lines((0, 10, "S1"))), unassigned, unassigned.book)[1] == []


def test_one_name_is_given_once_even_when_a_merge_during_the_run_left_it_on_two_old_speakers():
    old = before(lines((0, 10, "A"), (10, 20, "B")), ("A", "Alice", None), ("B", "Bob", None))
    merged_then_renamed = (sp.SpeakerInfo("B", "Alice", sp.palette_color(1)),)  # A merged away, B renamed
    book, carried = named_book(run(lines((0, 10, "S1"), (10, 20, "S2"))), old, merged_then_renamed)
    assert [s.name for s in book].count("Alice") == 1 and carried == ["Alice"]
