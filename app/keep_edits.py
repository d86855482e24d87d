"""Lines the user edited survive a new run: the final transcription after recording, and a
transcription run again over a transcript (after a cancel, or the whole file once more).

Rule (also in docs/app.md): a line the user changed (its text, times or speaker, or a split or
merge) is kept as the user left it — text and times. From the final run's lines
that overlap it, only the words inside its span give way (a word belongs to the span its middle
falls in); their other words stay, as a shorter line; lines that do not overlap stay whole.
Its speaker becomes the final speaker that overlaps it most (live labels are provisional; the
final diarization names who spoke), unless nothing overlaps it, when it keeps the one it had.
`with_edited` computes the result (lines and speaker book); `keep_edited` applies it as one more
undoable step after the final transcript of a recording (undo shows the pure final run), while a
transcription run again applies it in the run's own step (undo shows the transcript before it).
`overlaid` is the same without the final diarization: the edited lines keep their speakers, over
lines that are not a final run's (a run's live lines, the transcript a cancelled run gives back);
a line without word times cannot give part of itself way and stays whole beside them.
Each line is compared only with the lines near it in time (`Spans`, sorted by start): a run's end
over a long transcript costs O((n + m) log m), not n × m.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import replace

from app import commands
from app import speakers as sp
from app.transcript_model import TranscriptModel
from engine.types import Utterance


class Spans:
    """Lines sorted by start, to find the few that may overlap a span in O(log n) (a long
    recording's run ends by matching every final line against every edited one: 2,001 × 100 lines
    took 155 ms of the window's thread, checked pair by pair)."""

    def __init__(self, lines: Iterable[Utterance]) -> None:
        self.lines = sorted(lines, key=lambda u: u.start)  # stable: equal starts keep their order
        self.starts = [u.start for u in self.lines]
        self.longest = max((u.end - u.start for u in self.lines), default=0.0)

    def near(self, start: float, end: float) -> list[Utterance]:
        """Every line that overlaps [start, end] (and maybe some that only touch it), in start order."""
        first = bisect.bisect_left(self.starts, start - self.longest)
        return self.lines[first : bisect.bisect_right(self.starts, end)]


def overlap(a: Utterance, b: Utterance) -> float:
    return max(0.0, min(a.end, b.end) - max(a.start, b.start))


def inside(t: float, edited: Spans) -> bool:
    return any(e.start <= t < e.end for e in edited.near(t, t))


def outside_words(u: Utterance, edited: Spans) -> Utterance | None:
    """`u` without its words inside an edited line (None when nothing is left)."""
    if not any(overlap(u, e) > 0 for e in edited.near(u.start, u.end)):
        return u
    words = tuple(w for w in u.words if not inside((w.start + w.end) / 2, edited))
    if not words:
        return None
    text = " ".join(w.text.strip() for w in words)
    return replace(u, start=words[0].start, end=words[-1].end, text=text, words=words)


def merged(final: Sequence[Utterance], edited: Sequence[Utterance]) -> tuple[Utterance, ...]:
    """The final lines, with each edited line in place of the final words it covers."""
    mine, theirs = Spans(edited), Spans(final)
    kept = [k for u in final if (k := outside_words(u, mine)) is not None]
    placed = []
    for e in edited:
        best = max(theirs.near(e.start, e.end), key=lambda u: overlap(u, e), default=None)
        speaker = best.speaker if best is not None and overlap(best, e) > 0 else e.speaker
        placed.append(replace(e, speaker=speaker))
    return tuple(sorted([*kept, *placed], key=lambda u: (u.start, u.end)))


def overlaid(base: Sequence[Utterance], edited: Sequence[Utterance]) -> tuple[Utterance, ...]:
    """`base` with each edited line, as the user left it, in place of the words it covers."""
    mine = Spans(edited)
    kept = [k for u in base if (k := outside_words(u, mine) if u.words else u) is not None]
    return tuple(sorted([*kept, *edited], key=lambda u: (u.start, u.end)))


def with_edited(
    final: Sequence[Utterance], book: sp.SpeakerBook, edited: Sequence[Utterance]
) -> tuple[tuple[Utterance, ...], sp.SpeakerBook]:
    """The final lines with the edited ones merged in, and `book` with any speaker they name."""
    utterances = merged(final, edited)
    return utterances, with_speakers(book, utterances)


def with_speakers(book: sp.SpeakerBook, utterances: Sequence[Utterance]) -> sp.SpeakerBook:
    """`book` with an entry for every speaker `utterances` name that it lacks."""
    known = {s.id for s in book}
    for u in utterances:
        if u.speaker is not None and u.speaker not in known:
            book = (*book, sp.SpeakerInfo(u.speaker, u.speaker, sp.free_color(book)))
            known.add(u.speaker)
    return book


def keep_edited(model: TranscriptModel, edited: Sequence[Utterance]) -> None:
    """Put the edited lines back into the model's (final) document as one undoable step."""
    utterances, book = with_edited(model.utterances, model.book, edited)
    commands.set_document(model, replace(model.meta, utterances=utterances), book,
                          "Keep lines edited while recording")  # fmt: skip
