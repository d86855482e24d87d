"""Each edit command on the transcript model: the lines the table shows after it, the name it
gets in Edit ▸ Undo, undo restoring the table exactly, and the message of an edit refused."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QUndoStack

from app import commands, edits
from app import speakers as sp
from app.transcript_model import TranscriptModel
from engine.retranscribe import RangeResult
from engine.types import Speaker, Transcript, Utterance, Word


def words(text: str, start: float) -> tuple[Word, ...]:
    return tuple(Word(start + i * 0.4, start + i * 0.4 + 0.3, w) for i, w in enumerate(text.split()))


def line(start: float, text: str, speaker: str | None) -> Utterance:
    return Utterance(start, start + 2.0, text, speaker, words(text, start))


LINES = (
    line(0.0, "Good morning everyone.", "a"),
    line(3.0, "Morning! Shall we start?", "b"),
    line(6.0, "Yes, the budget first.", "a"),
    line(9.0, "Agreed.", "a"),
    line(12.0, "Then the travel plans.", None),
)


@pytest.fixture
def model(qapp) -> TranscriptModel:
    transcript = Transcript(LINES, (Speaker("a", "Ann"), Speaker("b", "Bo")), duration=20.0)
    model = TranscriptModel(QUndoStack())
    model.set_document(LINES, sp.book_from_transcript(transcript), transcript)
    return model


def shown(model: TranscriptModel) -> list[tuple[float, float, str, str]]:
    """The table as the user reads it: start, end, text, speaker name."""
    return [(u.start, u.end, u.text, sp.display_name(model.book, u.speaker)) for u in model.utterances]


def undone_exactly(model: TranscriptModel, before: list, undo_name: str) -> None:
    """The last edit is named `undo_name`; undo, redo and undo again leave the table `before`."""
    after = shown(model)
    assert model.undo_stack.undoText() == undo_name
    model.undo_stack.undo()
    assert shown(model) == before
    model.undo_stack.redo()
    assert shown(model) == after
    model.undo_stack.undo()


def test_setting_a_speaker_on_several_lines_is_one_named_step(model):
    before = shown(model)
    commands.set_speaker(model, [0, 4], "b")
    assert [name for *_, name in shown(model)] == ["Bo", "Bo", "Ann", "Ann", "Bo"]
    undone_exactly(model, before, "Set speaker to Bo")
    commands.set_speaker(model, [1], None)
    assert shown(model)[1][3] == sp.UNASSIGNED_NAME
    assert model.undo_stack.undoText() == f"Set speaker to {sp.UNASSIGNED_NAME}"
    with pytest.raises(ValueError, match="unknown speaker 'zz'"):
        commands.set_speaker(model, [0], "zz")


def test_an_edit_that_changes_nothing_adds_no_undo_step(model):
    commands.set_speaker(model, [0], "a")  # already Ann's
    commands.edit_text(model, 1, "Morning! Shall we start?")
    assert model.undo_stack.count() == 0


def test_retiming_a_line_past_its_neighbours_moves_it_into_time_order(model):
    before = shown(model)
    commands.retime(model, 3, 1.0, 2.5)  # "Agreed." now starts before "Morning!"
    assert [t for _, _, t, _ in shown(model)][:3] == [
        "Good morning everyone.",
        "Agreed.",
        "Morning! Shall we start?",
    ]
    assert shown(model)[1][:2] == (1.0, 2.5)
    undone_exactly(model, before, "Adjust times")
    commands.retime(model, 0, 3.0, 4.0)  # an equal start goes after the line already there
    assert [t for _, _, t, _ in shown(model)][:2] == ["Morning! Shall we start?", "Good morning everyone."]


def test_splitting_and_merging_name_their_steps(model):
    before = shown(model)
    commands.split(model, 1, len("Morning! "))
    assert [t for _, _, t, _ in shown(model)][1:3] == ["Morning!", "Shall we start?"]
    undone_exactly(model, before, "Split utterance")
    commands.merge_with_next(model, 2)
    assert shown(model)[2] == (6.0, 11.0, "Yes, the budget first. Agreed.", "Ann")
    undone_exactly(model, before, "Merge utterances")
    for row in (-1, 4):
        with pytest.raises(ValueError, match=r"^there is no next utterance to merge with$"):
            commands.merge_with_next(model, row)
    commands.merge_with_next(model, 3)  # the last two lines
    assert shown(model)[-1][2] == "Agreed. Then the travel plans."
    commands.merge_with_next(model, 0)  # the first two
    assert shown(model)[0][2] == "Good morning everyone. Morning! Shall we start?"


def test_speaker_book_edits_are_named_steps(model):
    commands.rename_speaker(model, "a", "  Alice ")
    assert model.undo_stack.undoText() == "Rename speaker to Alice"
    assert shown(model)[0][3] == "Alice"
    commands.recolor_speaker(model, "b", "#00AA00")
    assert model.undo_stack.undoText() == "Change speaker colour"
    assert sp.find(model.book, "b").color == "#00AA00"
    info = commands.add_speaker(model, "Cy")
    assert model.undo_stack.undoText() == "Add speaker Cy"
    assert sp.find(model.book, info.id).name == "Cy"
    model.undo_stack.undo()
    assert sp.find(model.book, info.id) is None


def test_merging_speakers_moves_their_lines_in_one_named_step(model):
    before = shown(model)
    commands.merge_speakers(model, ["b"], "a")
    assert [name for *_, name in shown(model)] == ["Ann", "Ann", "Ann", "Ann", sp.UNASSIGNED_NAME]
    assert sp.find(model.book, "b") is None
    undone_exactly(model, before, "Merge speakers into Ann")


def test_replacing_one_match_changes_only_that_match(model):
    before = shown(model)
    (match,) = [m for m in edits.find_matches([u.text for u in model.utterances], "budget")]
    commands.replace_match(model, match, "travel")
    assert shown(model)[2][2] == "Yes, the travel first."
    assert [w.text for w in model.utterance(2).words] == ["Yes,", "the", "travel", "first."]
    undone_exactly(model, before, "Replace")
    count = commands.replace_all(model, "the", "our", case_sensitive=False)  # "Then" too
    assert count == 3 and model.undo_stack.undoText() == "Replace “the” (3)"


def test_deleting_scattered_lines_is_one_step_and_undo_restores_their_places(model):
    before = shown(model)
    commands.delete_rows(model, [4, 0, 1, 0])
    assert [t for _, _, t, _ in shown(model)] == ["Yes, the budget first.", "Agreed."]
    undone_exactly(model, before, "Delete 3 line(s)")
    with pytest.raises(ValueError, match=r"^select the lines to delete$"):
        commands.delete_rows(model, [])


def test_an_empty_line_goes_after_the_selected_one_or_at_the_playhead(model):
    before = shown(model)
    row = commands.insert_empty(model, 1, at=0.0)
    assert row == 2 and shown(model)[2] == (5.0, 5.0 + edits.EMPTY_SECONDS, "", "Bo")
    undone_exactly(model, before, "Insert line")
    row = commands.insert_empty(model, None, at=7.5)
    assert row == 3 and shown(model)[3][:3] == (7.5, 7.5 + edits.EMPTY_SECONDS, "")
    assert shown(model)[3][3] == sp.UNASSIGNED_NAME
    row = commands.insert_empty(model, None, at=19.9)  # kept inside the recording
    assert shown(model)[row][:2] == (20.0 - edits.EMPTY_SECONDS, 20.0)


def test_shifting_all_times_is_refused_before_zero_and_named_with_its_amount(model):
    commands.shift_all(model, 0.5)
    assert shown(model)[0][:2] == (0.5, 2.5) and model.utterance(0).words[0].start == 0.5
    assert model.undo_stack.undoText() == "Shift all times by +0.50 s"
    with pytest.raises(ValueError):
        commands.shift_all(model, -1.0)
    assert model.undo_stack.count() == 1


def test_merging_same_speaker_lines_joins_each_run_and_counts_the_lines_gone(model):
    before = shown(model)
    assert commands.merge_same_speaker(model) == 1  # "Yes, the budget first." + "Agreed."
    assert [t for _, _, t, _ in shown(model)] == [
        "Good morning everyone.", "Morning! Shall we start?", "Yes, the budget first. Agreed.",
        "Then the travel plans.",
    ]  # fmt: skip
    undone_exactly(model, before, "Merge lines of the same speaker")
    with pytest.raises(ValueError, match=r"^no consecutive lines of the same speaker to merge$"):
        commands.merge_same_speaker(model, [0, 1])
    assert commands.merge_same_speaker(model, [1, 3]) == 1
    commands.set_speaker(model, [3], "a")
    assert commands.merge_same_speaker(model) == 1
    assert [t for _, _, t, _ in shown(model)][-1] == "Yes, the budget first. Agreed. Then the travel plans."


def test_lines_without_a_speaker_are_never_merged_as_one_speaker(model):
    commands.set_speaker(model, [3], None)
    with pytest.raises(ValueError, match="no consecutive lines"):
        commands.merge_same_speaker(model, [3, 4])


def test_a_range_transcribed_again_replaces_its_whole_lines_and_adds_new_voices(model):
    before = shown(model)
    assert commands.range_bounds(model, 3.5, 6.5) == (3.0, 8.0)  # widened to whole lines
    late = line(17.5, "See you.", "+new")  # far from every old line: a voice nobody had
    again = RangeResult(
        9.0, 20.0, (line(9.0, "Agreed!", "+x"), line(12.0, "Then travel.", "b"), late), ("+new",)
    )
    assert commands.replace_range(model, again) == (3, 3)
    assert [(t, name) for _, _, t, name in shown(model)][3:] == [
        ("Agreed!", "Ann"), ("Then travel.", "Bo"), ("See you.", "Speaker 3")
    ]  # fmt: skip
    new_voice = model.utterance(5).speaker
    assert new_voice not in {"a", "b", "+new"} and sp.find(model.book, new_voice) is not None
    undone_exactly(model, before, "Transcribe 0:09.0–0:20.0 again")
    assert len(model.book) == 2
    unused = RangeResult(3.0, 5.0, (line(3.0, "Morning.", "b"),), ("+other",))
    commands.replace_range(model, unused)
    assert len(model.book) == 2  # a new voice with no line left joins nobody's book


def test_undoing_a_speaker_book_edit_restores_the_names_and_redo_applies_it_again(model):
    commands.rename_speaker(model, "a", "Alice")
    model.undo_stack.undo()
    assert shown(model)[0][3] == "Ann"
    model.undo_stack.redo()
    assert shown(model)[0][3] == "Alice"
    commands.rename_speaker(model, "a", "Alice")  # no change: no step
    assert model.undo_stack.count() == 1


def test_typing_a_line_and_replacing_with_case_are_named_steps(model):
    commands.edit_text(model, 0, "Good evening everyone.")
    assert model.undo_stack.undoText() == "Edit text" and shown(model)[0][2] == "Good evening everyone."
    assert commands.replace_all(model, "Morning", "Evening", case_sensitive=True) == 1  # not "morning"
    assert shown(model)[1][2] == "Evening! Shall we start?"
    assert commands.replace_all(model, "EVENING", "day", case_sensitive=False) == 2


def test_a_whole_new_document_is_one_named_step_and_undo_brings_the_old_one_back(model):
    before, old_book = shown(model), model.book
    other = Transcript((line(1.0, "Something else.", "z"),), (Speaker("z", "Zed"),), duration=5.0, model="m2")
    commands.set_document(model, other, sp.book_from_transcript(other), "Open other")
    assert shown(model) == [(1.0, 3.0, "Something else.", "Zed")]
    assert model.meta.model == "m2" and model.meta.utterances == () and model.meta.speakers == ()
    undone_exactly(model, before, "Open other")
    assert model.book == old_book


def test_merging_same_speaker_lines_among_the_selected_rows_leaves_the_others(model):
    commands.set_speaker(model, [1], "a")  # now the first two lines are Ann's too
    assert commands.merge_same_speaker(model, [2, 3]) == 1  # only the selected run
    assert [t for _, _, t, _ in shown(model)][:3] == [
        "Good morning everyone.", "Morning! Shall we start?", "Yes, the budget first. Agreed."
    ]  # fmt: skip
    model.undo_stack.undo()
    assert commands.merge_same_speaker(model) == 3  # the run at the very start included
    assert (
        shown(model)[0][2] == "Good morning everyone. Morning! Shall we start? Yes, the budget first. Agreed."
    )
