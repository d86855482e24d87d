"""Editing while a range is transcribed again (`app.range_edits.RangeEdits` on the real table model,
with the range's result applied by `commands.replace_range` as the window does)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QUndoStack

from app import commands
from app import speakers as sp
from app.keep_edits import overlaid
from app.range_edits import RangeEdits
from app.transcript_model import TranscriptModel
from engine.retranscribe import RangeResult
from engine.types import Speaker, Transcript, Utterance, Word


def line(start: float, text: str, speaker: str = "a") -> Utterance:
    words = tuple(Word(start + i * 0.5, start + i * 0.5 + 0.4, w) for i, w in enumerate(text.split()))
    return Utterance(start, words[-1].end, text, speaker, words)


@pytest.fixture
def model(qapp) -> TranscriptModel:
    model = TranscriptModel(QUndoStack())
    book = sp.book_from_transcript(Transcript((), (Speaker("a", "Speaker 1"),)))
    lines = (line(0.0, "one two"), line(5.0, "three four"), line(10.0, "five six"), line(15.0, "seven eight"))
    model.set_document(lines, book, Transcript((), duration=30.0))
    return model


def texts(model: TranscriptModel) -> list[str]:
    return [u.text for u in model.utterances]


def test_only_lines_changed_in_the_range_since_the_job_began_count_as_the_users(model):
    commands.edit_text(model, 1, "three four fixed before")  # before the job: the range may replace it
    edits = RangeEdits(model)
    edits.begin()
    commands.edit_text(model, 2, "five six fixed")  # in [5, 12): the user's
    commands.edit_text(model, 3, "seven eight fixed")  # after the range
    commands.edit_text(model, 0, "one two fixed")  # before the range
    assert [u.text for u in edits.edited(5.0, 12.0)] == ["five six fixed"]
    everywhere = [u.text for u in edits.edited(0.0, 30.0)]
    assert everywhere == ["one two fixed", "five six fixed", "seven eight fixed"]


def test_undo_stops_at_the_jobs_start_while_it_runs_and_is_free_after(model):
    commands.edit_text(model, 0, "an edit before the job")
    edits = RangeEdits(model)
    edits.begin()
    assert edits.running and not edits.may_undo(), "below the floor lies the transcript the range came from"
    commands.edit_text(model, 1, "an edit during the job")
    assert edits.may_undo()
    model.undo_stack.undo()
    assert not edits.may_undo()
    edits.end()
    assert not edits.running and edits.may_undo()


def test_the_ranges_new_lines_give_way_to_the_line_fixed_meanwhile_in_one_undoable_step(model):
    edits = RangeEdits(model)
    edits.begin()
    commands.edit_text(model, 1, "three four as the user fixed it")
    during = model.utterances
    new = (line(5.0, "THREE FOUR"), line(10.0, "FIVE SIX"))
    result = RangeResult(start=5.0, end=12.0, utterances=new, new_speakers=(), model="test")
    mine = edits.edited(result.start, result.end)
    edits.end()
    commands.replace_range(model, result, lambda lines: overlaid(lines, mine))
    assert texts(model) == ["one two", "three four as the user fixed it", "FIVE SIX", "seven eight"]
    model.undo_stack.undo()
    assert model.utterances == during, "one step back: the table as the user left it"


def test_before_any_range_job_nothing_runs_and_undo_is_free(model):
    edits = RangeEdits(model)
    assert not edits.running and edits.may_undo()
