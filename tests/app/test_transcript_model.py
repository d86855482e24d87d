"""Editing the transcript through the table model: every edit is undoable and redoable."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack

from app import commands, edits
from app import speakers as sp
from app.transcript_model import END, SPEAKER, START, TEXT, ColorRole, TranscriptModel
from engine.export import render
from engine.types import Speaker, Transcript, Utterance, Word


def words(text: str, start: float) -> tuple[Word, ...]:
    return tuple(Word(start + i * 0.4, start + i * 0.4 + 0.3, w) for i, w in enumerate(text.split()))


@pytest.fixture
def model(qapp) -> TranscriptModel:
    texts = ["Good morning everyone.", "Morning! Shall we start?", "Yes, the budget first.", "Agreed."]
    utterances = tuple(Utterance(i * 3.0, i * 3.0 + 2.0, t, ("a", "b", "a", None)[i], words(t, i * 3.0))
                       for i, t in enumerate(texts))  # fmt: skip
    transcript = Transcript(utterances, (Speaker("a", "Speaker 1"), Speaker("b", "Speaker 2")), duration=20.0)
    model = TranscriptModel(QUndoStack())
    model.set_document(utterances, sp.book_from_transcript(transcript), transcript)
    return model


def texts(model: TranscriptModel) -> list[str]:
    return [u.text for u in model.utterances]


def test_typing_into_the_table_edits_text_and_undo_restores_it(model):
    assert model.setData(model.index(0, TEXT), "Good morning, everybody.")
    assert texts(model)[0] == "Good morning, everybody."
    model.undo_stack.undo()
    assert texts(model)[0] == "Good morning everyone."
    model.undo_stack.redo()
    assert texts(model)[0] == "Good morning, everybody."


def test_typed_times_retime_and_bad_times_are_refused_with_a_message(model):
    refused: list[str] = []
    model.edit_refused.connect(refused.append)
    assert model.setData(model.index(1, END), "0:04.5")
    assert model.utterance(1).end == 4.5
    assert not model.setData(model.index(1, START), "0:09")
    assert refused and "after" in refused[0]


def test_moving_a_start_past_the_next_keeps_the_table_in_time_order(model):
    commands.retime(model, 0, 3.5, 4.8)
    assert [u.start for u in model.utterances] == [3.0, 3.5, 6.0, 9.0]
    model.undo_stack.undo()
    assert [u.start for u in model.utterances] == [0.0, 3.0, 6.0, 9.0]


def test_changing_a_speaker_recolours_its_chip(model):
    before = model.data(model.index(3, SPEAKER), ColorRole)
    assert model.data(model.index(3, SPEAKER)) == sp.UNASSIGNED_NAME
    assert model.setData(model.index(3, SPEAKER), "b")
    assert model.data(model.index(3, SPEAKER)) == "Speaker 2"
    assert model.data(model.index(3, SPEAKER), ColorRole) != before
    model.undo_stack.undo()
    assert model.utterance(3).speaker is None


def test_split_and_merge_round_trip_through_undo(model):
    commands.split(model, 1, len("Morning! "))
    assert texts(model)[1:3] == ["Morning!", "Shall we start?"]
    assert model.utterance(1).end == model.utterance(2).start
    commands.merge_with_next(model, 1)
    assert texts(model)[1] == "Morning! Shall we start?"
    model.undo_stack.undo()
    model.undo_stack.undo()
    assert model.rowCount() == 4 and texts(model)[1] == "Morning! Shall we start?"
    with pytest.raises(ValueError, match="next"):
        commands.merge_with_next(model, 3)


def test_renaming_a_speaker_changes_every_row_and_the_export(model):
    commands.rename_speaker(model, "a", "Alice")
    assert [model.data(model.index(r, SPEAKER)) for r in (0, 2)] == ["Alice", "Alice"]
    assert b"Alice" in render(model.transcript(), "srt")
    assert b"Speaker 1" not in render(model.transcript(), "txt")
    model.undo_stack.undo()
    assert model.data(model.index(0, SPEAKER)) == "Speaker 1"


def test_merging_speakers_and_recolouring_are_undoable(model):
    commands.recolor_speaker(model, "b", "#00aa00")
    assert model.data(model.index(1, SPEAKER), ColorRole).name() == "#00aa00"
    commands.merge_speakers(model, ["b"], "a")
    assert [s.id for s in model.book] == ["a"] and model.utterance(1).speaker == "a"
    model.undo_stack.undo()
    assert [s.id for s in model.book] == ["a", "b"] and model.utterance(1).speaker == "b"


def test_replace_all_is_one_undo_step(model):
    count = commands.replace_all(model, "morning", "evening", case_sensitive=False)
    assert count == 2 and texts(model)[:2] == ["Good evening everyone.", "evening! Shall we start?"]
    assert model.undo_stack.count() == 1
    model.undo_stack.undo()
    assert texts(model)[0] == "Good morning everyone."


def test_the_table_is_read_only_while_results_stream_in(model):
    model.read_only = True
    assert not model.flags(model.index(0, TEXT)) & Qt.ItemFlag.ItemIsEditable
    assert not model.setData(model.index(0, TEXT), "x")
    assert model.undo_stack.count() == 0


def test_rows_are_found_by_time(model):
    assert model.row_at(3.5) == 1 and model.row_at(2.5) is None and model.nearest_row(2.4) == 0


class Spy:
    """Records what a view would hear from the model."""

    def __init__(self, model: TranscriptModel) -> None:
        self.resets, self.changed, self.inserted, self.removed, self.turns = 0, [], [], [], []
        model.modelReset.connect(lambda: setattr(self, "resets", self.resets + 1))
        model.dataChanged.connect(self._on_changed)
        model.rowsInserted.connect(lambda _p, a, b: self.inserted.append((a, b)))
        model.rowsRemoved.connect(lambda _p, a, b: self.removed.append((a, b)))
        model.turns_changed.connect(self.turns.append)

    def _on_changed(self, a, b, *_) -> None:
        self.changed.append((a.row(), b.row(), a.column(), b.column()))


def big_model(qapp, rows: int = 1200) -> TranscriptModel:
    utterances = tuple(Utterance(i * 2.0, i * 2.0 + 1.5, f"line {i} about {'the plan' if i % 3 else 'lunch'}",
                                 f"s{i % 4}") for i in range(rows))  # fmt: skip
    transcript = Transcript(utterances, tuple(Speaker(f"s{k}", f"Speaker {k}") for k in range(4)),
                            duration=rows * 2.0)  # fmt: skip
    model = TranscriptModel(QUndoStack())
    model.set_document(utterances, sp.book_from_transcript(transcript), transcript)
    return model


def test_a_text_edit_touches_one_row_and_no_lane(qapp):
    model = big_model(qapp)
    spy = Spy(model)
    commands.edit_text(model, 500, "a new text")
    assert spy.resets == 0 and spy.changed == [(500, 500, START, TEXT)] and spy.turns == []


def test_replace_all_is_one_undo_step_that_updates_only_the_rows_it_changed(qapp):
    model = big_model(qapp)
    spy = Spy(model)
    before = model.utterances
    count = commands.replace_all(model, "the plan", "our plan", case_sensitive=False)
    assert count == 800 and model.undo_stack.count() == 1
    touched = {r for a, b, *_ in spy.changed for r in range(a, b + 1)}
    assert touched == {i for i in range(1200) if i % 3} and spy.resets == 0 and not spy.inserted
    spy.changed.clear()
    model.undo_stack.undo()
    assert model.utterances == before and spy.resets == 0
    assert {r for a, b, *_ in spy.changed for r in range(a, b + 1)} == touched


def test_split_inserts_one_row_and_names_only_its_speaker(qapp):
    model = big_model(qapp)
    spy = Spy(model)
    commands.split(model, 10, 5)
    assert spy.resets == 0 and spy.inserted and spy.turns == [frozenset({"s2"})]
    assert model.stats()["s2"][1] == 301  # talk-time counts follow the edit


def test_renaming_repaints_only_the_speaker_column(qapp):
    model = big_model(qapp)
    spy = Spy(model)
    commands.rename_speaker(model, "s1", "Ada")
    assert spy.resets == 0 and spy.changed == [(0, 1199, SPEAKER, SPEAKER)] and spy.turns == []
    assert model.index(1, SPEAKER).data() == "Ada"


def test_shifting_all_times_shows_at_once_and_undo_redo_are_exact(model, qtbot):
    before = model.utterances
    changed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda top, bottom, *_: changed.append((top.row(), bottom.row())))
    commands.shift_all(model, 1.5)
    assert changed == [(0, 3)]  # one signal over every row, not one per row
    assert model.index(1, START).data() == "0:04.5" and model.row_at(4.6) == 1
    assert model.utterance(2).words[0].start == before[2].words[0].start + 1.5
    qtbot.wait(100)  # the other rows' words are rebuilt while idle
    shifted = model.utterances
    assert shifted == edits.shift(before, 1.5)
    commands.shift_all(model, 0.25)
    model.undo_stack.undo()
    assert model.utterances == shifted
    model.undo_stack.undo()
    assert model.utterances == before and model.undo_stack.undoText() != "Shift all times by +1.50 s"
    model.undo_stack.redo()
    assert model.utterances == shifted
    with pytest.raises(ValueError, match="cannot move"):
        commands.shift_all(model, -10.0)
    assert model.utterances == shifted
