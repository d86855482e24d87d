"""Undoable edits of the transcript: QUndoCommands plus the functions that build and push them.

Each function validates with the pure helpers in `app.edits` / `app.speakers` (a refusal is a
`ValueError` and nothing is pushed), then pushes one command on the model's undo stack. Commands
store the rows before and after, so undo and redo are exact. Three shapes cover every edit:
`ReplaceRows` (a run of rows becomes another, e.g. split 1→2, merge 2→1, a re-transcribed range;
optionally the speaker book changes too), `ChangeRows` (rows keep their places, e.g. Replace All
as one batch; optionally the speaker book changes too) and `SetDocument` (everything, e.g. a
finished transcription). Each applies in O(rows it touches); only `SetDocument` resets the model.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from PySide6.QtGui import QUndoCommand

from app import edits
from app import speakers as sp
from app.timeline import format_time
from engine.types import Transcript, Utterance

if TYPE_CHECKING:
    from app.transcript_model import TranscriptModel
    from engine.retranscribe import RangeResult


@dataclass(frozen=True, slots=True)
class Document:
    utterances: tuple[Utterance, ...]
    book: sp.SpeakerBook
    meta: Transcript


class ReplaceRows(QUndoCommand):
    def __init__(self, model: TranscriptModel, first: int, old: Sequence[Utterance],
                 new: Sequence[Utterance], text: str,
                 books: tuple[sp.SpeakerBook, sp.SpeakerBook] | None = None) -> None:  # fmt: skip
        super().__init__(text)
        self.model, self.first, self.old, self.new = model, first, tuple(old), tuple(new)
        self.books = books

    def redo(self) -> None:
        if self.books:  # speakers first, so the new rows find theirs
            self.model.change_rows({}, self.books[1])
        self.model.replace_rows(self.first, len(self.old), self.new)

    def undo(self) -> None:
        self.model.replace_rows(self.first, len(self.new), self.old)
        if self.books:
            self.model.change_rows({}, self.books[0])


class ChangeRows(QUndoCommand):
    def __init__(self, model: TranscriptModel, old: Mapping[int, Utterance], new: Mapping[int, Utterance],
                 text: str, books: tuple[sp.SpeakerBook, sp.SpeakerBook] | None = None) -> None:  # fmt: skip
        super().__init__(text)
        self.model, self.old, self.new, self.books = model, dict(old), dict(new), books

    def redo(self) -> None:
        self.model.change_rows(self.new, self.books[1] if self.books else None)

    def undo(self) -> None:
        self.model.change_rows(self.old, self.books[0] if self.books else None)


class SetDocument(QUndoCommand):
    def __init__(self, model: TranscriptModel, old: Document, new: Document, text: str) -> None:
        super().__init__(text)
        self.model, self.old, self.new = model, old, new

    def redo(self) -> None:
        self.model.set_document(self.new.utterances, self.new.book, self.new.meta)

    def undo(self) -> None:
        self.model.set_document(self.old.utterances, self.old.book, self.old.meta)


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
    """[start, end] widened to the whole lines that start inside it."""
    rows = _rows_in(model, start, end)
    if rows:
        start = min(start, model.utterance(rows[0]).start)
        end = max(end, max(model.utterance(r).end for r in rows))
    return start, end


def _rows_in(model: TranscriptModel, start: float, end: float) -> range:
    first = model.insertion_row(start - 1e-6) if start > 0 else 0
    while first > 0 and model.utterance(first - 1).start >= start - 1e-6:
        first -= 1
    last = model.insertion_row(end - 1e-6)
    return range(first, max(first, last))


def replace_range(model: TranscriptModel, result: RangeResult) -> tuple[int, int]:
    """The lines starting in the result's range become its lines (one undo step); speakers the
    result brought that match nobody join the book. Returns (first row, rows inserted)."""
    rows = _rows_in(model, result.start, result.end)
    book, names = model.book, {}
    for sid in result.new_speakers:
        book, info = sp.add_speaker(book)
        names[sid] = info.id
    new = tuple(replace(u, speaker=names.get(u.speaker, u.speaker)) for u in result.utterances)
    old = [model.utterance(r) for r in rows]
    books = (model.book, book) if book != model.book else None
    text = f"Transcribe {format_time(result.start)}–{format_time(result.end)} again"
    new = tuple(sorted(new, key=lambda u: u.start))
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


def replace_all(model: TranscriptModel, query: str, replacement: str, case_sensitive: bool) -> int:
    utterances, count = edits.replace_all(model.utterances, query, replacement, case_sensitive)
    _push_changes(model, dict(enumerate(utterances)), f"Replace “{query}” ({count})")
    return count


def replace_match(model: TranscriptModel, match: edits.Match, replacement: str) -> None:
    u = model.utterance(match.row)
    text = u.text[: match.start] + replacement + u.text[match.end :]
    _push_changes(model, {match.row: edits.set_text(u, text)}, "Replace")
