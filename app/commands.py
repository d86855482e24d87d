"""Undoable edits of the transcript: the functions that validate an edit and push its command.

Each function validates with the pure helpers in `app.edits` / `app.speakers` (a refusal is a
`ValueError` and nothing is pushed), then pushes one command (`app.undo_commands`) on the model's
undo stack, so every edit is one undo step (`Batch` groups several, e.g. a deletion of scattered
lines). Commands store what undo and redo need to be exact and apply in O(rows they touch).
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtGui import QUndoCommand

from app import edits, range_join
from app import speakers as sp
from app.timeline import format_time, parse_time
from app.undo_commands import (
    Batch,
    ChangeRows,
    Document,
    ReplaceRows,
    SetDocument,
    ShiftTimes,
    TranscriptModel,
)
from engine.types import Transcript, Utterance

if TYPE_CHECKING:
    from engine.retranscribe import RangeResult

Overlay = Callable[[tuple[Utterance, ...]], tuple[Utterance, ...]]  # new lines -> with the user's over them


def current_document(model: TranscriptModel) -> Document:
    return Document(model.utterances, model.book, model.meta)


def _push_changes(model: TranscriptModel, new: Mapping[int, Utterance], text: str,
                  book: sp.SpeakerBook | None = None) -> None:  # fmt: skip
    changed = {r: u for r, u in new.items() if u != model.utterance(r)}
    if not changed and (book is None or book == model.book):
        return
    old = {r: model.utterance(r) for r in changed}
    books = None if book is None else (model.book, book)
    model.undo_stack.push(ChangeRows(model, old, changed, text, books))


def set_document(model: TranscriptModel, transcript: Transcript, book: sp.SpeakerBook, text: str,
                 before: Document | None = None) -> None:  # fmt: skip
    """Replace everything; undo restores `before` (default: what the model shows now)."""
    meta = replace(transcript, utterances=(), speakers=())
    new = Document(transcript.utterances, book, meta)
    model.undo_stack.push(SetDocument(model, before or current_document(model), new, text))


def range_bounds(model: TranscriptModel, start: float, end: float) -> tuple[float, float]:
    """[start, end] widened to the whole lines that overlap it (`app.range_join.widen`)."""
    return range_join.widen(model.utterances, start, end)


def replace_range(
    model: TranscriptModel, result: RangeResult, keep: Overlay | None = None
) -> tuple[int, int]:
    """The lines starting in the result's range become its lines, attributed to the speakers of
    the lines they replace (`app.range_join`), as one undo step; speakers the result brought that
    match nobody join the book; `keep` then lays the user's own lines over them. Returns (first
    row, rows inserted)."""
    utterances = model.utterances
    rows = range_join.lines_in(utterances, result.start, result.end)
    old = utterances[rows.start : rows.stop]
    book, names = model.book, {}
    new = range_join.attribute(result.utterances, old)
    for sid in result.new_speakers:
        if any(u.speaker == sid for u in new):
            book, info = sp.add_speaker(book)
            names[sid] = info.id
    new = tuple(replace(u, speaker=names.get(u.speaker, u.speaker)) for u in new)
    new = keep(new) if keep is not None else new
    books = (model.book, book) if book != model.book else None
    text = f"Transcribe {format_time(result.start)}–{format_time(result.end)} again"
    model.undo_stack.push(ReplaceRows(model, rows.start, old, new, text, books))
    return rows.start, len(new)


def edit_text(model: TranscriptModel, row: int, text: str) -> None:
    _push_changes(model, {row: edits.set_text(model.utterance(row), text)}, "Edit text")


def set_speaker(model: TranscriptModel, rows: Iterable[int], speaker_id: str | None) -> None:
    if speaker_id is not None and sp.find(model.book, speaker_id) is None:
        raise ValueError(f"unknown speaker {speaker_id!r}")
    new = {r: replace(model.utterance(r), speaker=speaker_id) for r in rows}
    _push_changes(model, new, f"Set speaker to {sp.display_name(model.book, speaker_id)}")


def retime(model: TranscriptModel, row: int, start: float, end: float) -> None:
    """New boundaries for a row; the row moves to keep the table in start-time order."""
    u = edits.retime(model.utterance(row), start, end, model.meta.duration)
    rows = list(model.utterances)
    rows.pop(row)
    target = model_insertion(rows, u.start)
    rows.insert(target, u)
    lo, hi = min(row, target), max(row, target)
    old = model.utterances[lo : hi + 1]
    model.undo_stack.push(ReplaceRows(model, lo, old, rows[lo : hi + 1], "Adjust times"))


def model_insertion(utterances: Sequence[Utterance], start: float) -> int:
    """Where an utterance starting at `start` goes among sorted `utterances` (after equal starts)."""
    return bisect.bisect_right([u.start for u in utterances], start)


def split(model: TranscriptModel, row: int, cursor: int) -> None:
    left, right = edits.split(model.utterance(row), cursor)
    model.undo_stack.push(ReplaceRows(model, row, [model.utterance(row)], [left, right], "Split utterance"))


def merge_with_next(model: TranscriptModel, row: int) -> None:
    if not 0 <= row < model.rowCount() - 1:
        raise ValueError("there is no next utterance to merge with")
    a, b = model.utterance(row), model.utterance(row + 1)
    model.undo_stack.push(ReplaceRows(model, row, [a, b], [edits.merge(a, b)], "Merge utterances"))


def rename_speaker(model: TranscriptModel, speaker_id: str, name: str) -> None:
    _push_changes(model, {}, f"Rename speaker to {name.strip()}", sp.rename(model.book, speaker_id, name))


def recolor_speaker(model: TranscriptModel, speaker_id: str, color: str) -> None:
    _push_changes(model, {}, "Change speaker colour", sp.recolor(model.book, speaker_id, color))


def add_speaker(model: TranscriptModel, name: str | None = None) -> sp.SpeakerInfo:
    book, info = sp.add_speaker(model.book, name)
    _push_changes(model, {}, f"Add speaker {info.name}", book)
    return info


def merge_speakers(model: TranscriptModel, sources: Iterable[str], target: str) -> None:
    book, utterances = sp.merge_speakers(model.book, model.utterances, sources, target)
    new = dict(enumerate(utterances))
    _push_changes(model, new, f"Merge speakers into {sp.display_name(model.book, target)}", book)


def replace_all(model: TranscriptModel, query: str, replacement: str, case_sensitive: bool,
                regex: bool = False, whole_words: bool = False) -> int:
    utterances, count = edits.replace_all(
        model.utterances, query, replacement, case_sensitive, regex, whole_words
    )
    _push_changes(model, dict(enumerate(utterances)), f"Replace “{query}” ({count})")
    return count


def replace_match(model: TranscriptModel, match: edits.Match, replacement: str,
                  pattern: re.Pattern[str] | None = None) -> None:
    """Replace one match; with the regular expression that found it, `replacement` may name its groups."""
    u = model.utterance(match.row)
    if pattern is not None and (found := pattern.match(u.text, match.start)) is not None:
        try:
            replacement = found.expand(replacement)
        except (re.error, IndexError) as exc:
            raise ValueError(f"not a valid replacement: {exc}") from None
    text = u.text[: match.start] + replacement + u.text[match.end :]
    _push_changes(model, {match.row: edits.set_text(u, text)}, "Replace")


def typed(model: TranscriptModel, row: int, column: str, value: object) -> None:
    """What the user typed into a cell (`column`: "text", "speaker", "start" or "end")."""
    u = model.utterance(row)
    if column == "text":
        edit_text(model, row, str(value))
    elif column == "speaker":
        set_speaker(model, [row], str(value) if value else None)
    else:
        t = parse_time(str(value))
        retime(model, row, *((t, u.end) if column == "start" else (u.start, t)))


def delete_rows(model: TranscriptModel, rows: Iterable[int]) -> None:
    """Remove lines (one undo step; each run of consecutive rows is removed in one go)."""
    chosen = sorted(set(rows))
    if not chosen:
        raise ValueError("select the lines to delete")
    commands: list[QUndoCommand] = []
    for first, last in reversed(edits.runs(chosen)):  # from the end: earlier rows keep their numbers
        old = model.utterances[first : last + 1]
        commands.append(ReplaceRows(model, first, old, (), ""))
    _push_all(model, commands, f"Delete {len(chosen)} line(s)")


def insert_empty(model: TranscriptModel, row: int | None, at: float) -> int:
    """An empty line after `row` (or at time `at` when no row is selected); returns its row."""
    u = edits.empty_after(model.utterance(row) if row is not None else None, at, model.meta.duration)
    target = model.insertion_row(u.start)
    model.undo_stack.push(ReplaceRows(model, target, (), (u,), "Insert line"))
    return target


def shift_all(model: TranscriptModel, seconds: float) -> None:
    """Every time (lines and words) moved by `seconds` (one undo step); refused (ValueError, nothing
    pushed) when a line would start before 0."""
    if model.rowCount():
        edits.check_shift(model.utterance(0).start, seconds)
    model.undo_stack.push(ShiftTimes(model, seconds, f"Shift all times by {seconds:+.2f} s"))


def merge_same_speaker(model: TranscriptModel, rows: Sequence[int] | None = None) -> int:
    """Join every run of consecutive lines of one speaker (among `rows`, default all) into one
    line, as one undo step; returns how many lines went away."""
    span = range(model.rowCount()) if not rows else range(min(rows), max(rows) + 1)
    lines = model.utterances
    found = edits.runs([i for i in span[1:] if _same_speaker(lines[i - 1], lines[i])])
    if not found:
        raise ValueError("no consecutive lines of the same speaker to merge")
    steps = []  # one small replacement per run, from the end: rows before each run keep their numbers
    for first, last in reversed(found):
        old = lines[first - 1 : last + 1]
        steps.append(ReplaceRows(model, first - 1, old, edits.merge_runs(old), ""))
    _push_all(model, steps, "Merge lines of the same speaker")
    return sum(last - first + 1 for first, last in found)


def _same_speaker(a: Utterance, b: Utterance) -> bool:
    return a.speaker is not None and a.speaker == b.speaker


def _push_all(model: TranscriptModel, steps: Sequence[QUndoCommand], text: str) -> None:
    model.undo_stack.push(Batch(model, steps, text))
