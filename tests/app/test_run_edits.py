"""Editing while a run's lines arrive: edits stay, undo never changes a line that moved, and the
run's end gets every line the user made (`app.run_edits.RunEdits` on the real table model)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QUndoStack

from app import commands
from app import speakers as sp
from app.run_edits import RunEdits
from app.transcript_model import TranscriptModel
from engine.types import Speaker, Transcript, Utterance, Word


def line(start: float, text: str, speaker: str = "a") -> Utterance:
    words = tuple(Word(start + i * 0.5, start + i * 0.5 + 0.4, w) for i, w in enumerate(text.split()))
    return Utterance(start, words[-1].end, text, speaker, words)


def texts(model: TranscriptModel) -> list[str]:
    return [u.text for u in model.utterances]


@pytest.fixture
def model(qapp) -> TranscriptModel:
    model = TranscriptModel(QUndoStack())
    book = sp.book_from_transcript(Transcript((), (Speaker("a", "Speaker 1"),)))
    model.set_document((), book, Transcript(()))
    return model


def earlier_run(model: TranscriptModel) -> tuple[Utterance, ...]:
    lines = (line(0.0, "old one two"), line(5.0, "old three four"), line(10.0, "old five six"))
    model.set_document(lines, model.book, Transcript((), duration=60.0))
    return lines


def test_a_line_edited_while_later_chunks_arrive_stays_edited_and_can_be_undone(model):
    run = RunEdits(model)
    run.begin(set())
    assert run.add([line(0.0, "first chunk words")], editing=False)
    commands.edit_text(model, 0, "First chunk, fixed.")
    assert run.add([line(30.0, "second chunk words")], editing=False)  # after every row: no fold
    assert texts(model) == ["First chunk, fixed.", "second chunk words"]
    assert run.may_undo(), "an edit made during the run can be undone while later chunks arrive"
    model.undo_stack.undo()
    assert texts(model) == ["first chunk words", "second chunk words"]
    assert not run.may_undo(), "undo stops at the run's start"
    model.undo_stack.redo()
    assert [u.text for u in run.settle()] == ["First chunk, fixed."]
    assert not run.running and model.undo_stack.count() == 0


def test_a_chunk_landing_before_an_edited_line_keeps_the_edit_and_no_undo_can_hit_a_moved_row(model):
    run = RunEdits(model)
    run.begin(set())
    run.add([line(40.0, "late chunk words")], editing=False)
    commands.edit_text(model, 0, "Late chunk, fixed.")
    run.add([line(0.0, "early chunk words")], editing=False)  # lands before the edited row
    assert texts(model) == ["early chunk words", "Late chunk, fixed."]
    assert not run.may_undo() and model.undo_stack.count() == 0, (
        "a step naming row 0 would now hit another line"
    )
    assert [u.text for u in run.settle()] == ["Late chunk, fixed."]


def test_a_change_to_every_time_is_folded_before_the_next_chunk_is_added(model):
    run = RunEdits(model)
    run.begin(set())
    run.add([line(0.0, "one two")], editing=False)
    commands.shift_all(model, 1.0)  # not by place: undoing it later would move the new rows too
    run.add([line(30.0, "three four")], editing=False)
    assert [u.start for u in model.utterances] == [1.0, 30.0]
    assert not run.may_undo()
    assert [u.start for u in run.settle()] == [1.0]


def test_a_chunk_that_must_reset_the_table_waits_while_a_line_is_being_edited(model):
    old = earlier_run(model)
    run = RunEdits(model)
    run.begin(set(old))
    assert not run.add([line(0.0, "first chunk")], editing=True)  # it takes the earlier run's place
    assert model.utterances == old
    assert run.add([line(0.0, "first chunk")], editing=False)
    assert texts(model) == ["first chunk"]
    commands.edit_text(model, 0, "First, fixed.")
    assert run.add([line(9.0, "next chunk")], editing=True), "an append does not disturb the open editor"
    commands.edit_text(model, 1, "Next, fixed.")
    assert not run.add([line(3.0, "between them")], editing=True)
    assert texts(model) == ["First, fixed.", "Next, fixed."]


def test_the_lines_a_run_replaces_go_at_its_first_chunk_and_the_users_own_lines_stay(model):
    old = earlier_run(model)
    commands.edit_text(model, 1, "old three four, fixed before the run")
    run = RunEdits(model)
    run.begin(set(old))  # the earlier run's lines as it gave them
    commands.edit_text(model, 2, "old five six, fixed while it starts")
    assert run.add([line(0.0, "new one two"), line(5.0, "new three four five six")], editing=False)
    assert texts(model) == [
        "new one two",
        "old three four, fixed before the run",
        "five six",  # the chunk's words inside the user's line gave way
        "old five six, fixed while it starts",
    ]
    kept = [u.text for u in run.settle()]
    assert kept == ["old three four, fixed before the run", "old five six, fixed while it starts"]


def test_a_chunk_line_gives_way_word_by_word_to_a_line_the_user_fixed(model):
    run = RunEdits(model)
    run.begin(set())
    run.add([line(0.0, "alpha beta")], editing=False)
    commands.retime(model, 0, 0.0, 3.0)  # the user's line now covers 0–3 s
    commands.edit_text(model, 0, "Alpha, beta.")
    run.add([line(2.0, "gamma delta epsilon")], editing=False)  # words at 2.0, 2.5, 3.0
    assert texts(model) == ["Alpha, beta.", "epsilon"]


def test_a_chunk_line_without_word_times_stays_whole_beside_the_users_line(model):
    run = RunEdits(model)
    run.begin(set())
    run.add([line(0.0, "alpha beta")], editing=False)
    commands.edit_text(model, 0, "Alpha, beta.")
    bare = Utterance(0.5, 4.0, "beta gamma", "a")  # a server's live line: no word times
    run.add([bare], editing=False)
    assert texts(model) == ["Alpha, beta.", "beta gamma"]


def test_a_new_run_keeper_runs_nothing_and_leaves_undo_alone(model):
    run = RunEdits(model)
    assert not run.running and run.may_undo()
    assert run.add([line(0.0, "no run")], editing=False) and model.rowCount() == 0
    assert run.settle() == []


def test_a_chunk_without_lines_is_taken_at_once(model):
    run = RunEdits(model)
    run.begin(set())
    assert run.add([], editing=True), "an empty chunk would be offered again forever"


def test_a_chunk_landing_before_the_others_waits_for_nothing_when_nothing_was_edited(model):
    run = RunEdits(model)
    run.begin(set())
    run.add([line(40.0, "late chunk")], editing=False)
    assert run.add([line(0.0, "early chunk")], editing=True), "no edit to fold: the open editor is left alone"
    assert texts(model) == ["early chunk", "late chunk"]


def test_edits_made_before_the_run_stay_undoable_after_it_and_do_not_make_chunks_fold(model):
    earlier_run(model)
    commands.shift_all(model, 1.0)  # before the run: not by place, but below the floor
    run = RunEdits(model)
    run.begin(set(model.utterances))
    run.add([line(0.0, "new first"), line(3.0, "new also")], editing=False)  # replaces the earlier lines
    commands.merge_same_speaker(model)  # a batch of row changes, by place
    run.add([line(30.0, "new second")], editing=False)
    assert run.may_undo(), "nothing above the floor names rows other than by place"
    assert model.meta.duration == 60.0, "the fold kept what the transcript says of itself"
    run.settle()
    assert model.undo_stack.count() == 1, "the step made before the run is still there"
    model.undo_stack.undo()
    assert [u.start for u in model.utterances] == [0.0, 5.0, 10.0]


def test_the_runs_end_tells_the_lanes_and_counts_once_however_many_edits_it_walks_back(model):
    # catches: the undo walk at a run's end announced step by step (each redrew the waveform's
    # lanes and recounted the speakers: a third of the window's work at the run's end)
    earlier_run(model)
    run = RunEdits(model)
    run.begin(set(model.utterances))
    for k in range(3):
        commands.edit_text(model, k, f"fixed {k}")
    told: list[str] = []
    model.document_changed.connect(lambda: told.append("document"))
    model.turns_changed.connect(lambda speakers: told.append("turns"))
    assert [u.text for u in run.settle()] == ["fixed 0", "fixed 1", "fixed 2"]
    assert texts(model) == ["old one two", "old three four", "old five six"]  # back at the floor
    assert told == ["document"]  # once, where each undone step told it before
