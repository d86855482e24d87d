"""Speakers as the editor sees them: id, display name and colour (no Qt).

A `SpeakerBook` is an ordered, immutable tuple of `SpeakerInfo`. The transcript's utterances refer
to speakers by id; names live only here, so a rename is one change that every view and every
export picks up (`engine_speakers` gives the `engine.types.Speaker`s an export writes). Colours
come from `PALETTE` in order of appearance, unless a project stored its own; a new speaker gets
the first palette colour no speaker uses (`free_color`). Chip text is black or white, whichever
contrasts more with the chip (`chip_text_color`, WCAG 2 contrast ratio, ≥ 4.5:1 for the palette).
Utterances whose speaker is None are "unassigned": they get no chip colour of their own (`UNASSIGNED_COLOR`).
A speaker named after a known voice keeps the recogniser's `score` (`engine.voices`) until a
person renames it: a name typed by hand has none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from engine.types import Speaker, Transcript, Utterance

PALETTE = (
    "#4E79A7", "#E15759", "#59A14F", "#F28E2B", "#B07AA1",
    "#76B7B2", "#EDC948", "#FF9DA7", "#9C755F", "#7F7F7F",
)  # fmt: skip
UNASSIGNED_COLOR = "#B8BEC6"
UNASSIGNED_NAME = "Unassigned"


@dataclass(frozen=True, slots=True)
class SpeakerInfo:
    id: str
    name: str
    color: str  # "#RRGGBB"
    score: float | None = None  # similarity to the known voice the name was recognised from

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a speaker needs an id")
        if not (len(self.color) == 7 and self.color.startswith("#")):
            raise ValueError(f"colour must look like #RRGGBB, got {self.color!r}")


SpeakerBook = tuple[SpeakerInfo, ...]


def palette_color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def free_color(book: SpeakerBook) -> str:
    """The first palette colour no speaker in `book` uses (cycling only once all are taken)."""
    used = {s.color.upper() for s in book}
    return next((c for c in PALETTE if c.upper() not in used), palette_color(len(book)))


def relative_luminance(color: str) -> float:
    """WCAG 2 relative luminance of "#RRGGBB"."""
    channels = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two colours, 1 … 21."""
    hi, lo = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def chip_text_color(background: str) -> str:
    """Black or white, whichever reads better on `background`."""
    black, white = contrast_ratio(background, "#000000"), contrast_ratio(background, "#FFFFFF")
    return "#000000" if black >= white else "#FFFFFF"


def book_from_transcript(transcript: Transcript, colors: Mapping[str, str] | None = None) -> SpeakerBook:
    """The transcript's speakers (plus any id utterances use without an entry), coloured: a
    speaker keeps its colour from `colors`; the others get colours no speaker uses yet."""
    colors = colors or {}
    known = {s.id: s.name for s in transcript.speakers}
    scores = {s.id: s.score for s in transcript.speakers}
    used = [u.speaker for u in transcript.utterances if u.speaker and u.speaker not in known]
    ids = list(dict.fromkeys([*known, *used]))
    book: SpeakerBook = tuple(SpeakerInfo(sid, sid, colors[sid]) for sid in ids if sid in colors)
    for sid in ids:
        if sid not in colors:
            book = (*book, SpeakerInfo(sid, sid, free_color(book)))
    by_id = {s.id: s for s in book}
    return tuple(replace(by_id[sid], name=known.get(sid, sid), score=scores.get(sid)) for sid in ids)


def engine_speakers(book: SpeakerBook) -> tuple[Speaker, ...]:
    return tuple(Speaker(s.id, s.name, s.score) for s in book)


def find(book: SpeakerBook, speaker_id: str | None) -> SpeakerInfo | None:
    return next((s for s in book if s.id == speaker_id), None)


def display_name(book: SpeakerBook, speaker_id: str | None) -> str:
    if speaker_id is None:
        return UNASSIGNED_NAME
    found = find(book, speaker_id)
    return found.name if found else speaker_id


def display_color(book: SpeakerBook, speaker_id: str | None) -> str:
    found = find(book, speaker_id)
    return found.color if found else UNASSIGNED_COLOR


def with_live_speaker(book: SpeakerBook, speaker_id: str | None, known: tuple[str, float] | None = None
                      ) -> SpeakerBook:  # fmt: skip
    """`book` with a live recording's speaker in it: added as "Speaker N" (its place) when new, and
    named after the known voice the engine recognised (`known`: name and score) or, without one,
    back to "Speaker N" when it had a recognised name. A name the user typed stays."""
    if speaker_id is None:
        return book
    if find(book, speaker_id) is None:
        book = (*book, SpeakerInfo(speaker_id, f"Speaker {len(book) + 1}", free_color(book)))
    index = next(i for i, s in enumerate(book) if s.id == speaker_id)
    info, label = book[index], f"Speaker {index + 1}"
    if info.score is None and info.name != label:  # the user named this speaker
        return book
    if known is not None:
        info = replace(info, name=known[0], score=known[1])
    else:
        info = replace(info, name=label, score=None)
    return (*book[:index], info, *book[index + 1 :])


def rename(book: SpeakerBook, speaker_id: str, name: str) -> SpeakerBook:
    name = " ".join(name.split())
    if not name:
        raise ValueError("a speaker name cannot be empty")
    if any(s.name == name and s.id != speaker_id for s in book):
        raise ValueError(f"another speaker is already called {name!r}; merge them instead")
    return tuple(replace(s, name=name, score=None) if s.id == speaker_id else s
                 for s in _require(book, speaker_id))  # fmt: skip


def recolor(book: SpeakerBook, speaker_id: str, color: str) -> SpeakerBook:
    return tuple(
        replace(s, color=color.upper()) if s.id == speaker_id else s for s in _require(book, speaker_id)
    )


def add_speaker(book: SpeakerBook, name: str | None = None) -> tuple[SpeakerBook, SpeakerInfo]:
    """A new speaker with a fresh id ("S1", "S2"…), an unused palette colour and a free name."""
    ids = {s.id for s in book}
    names = {s.name for s in book}
    n = 1
    while f"S{n}" in ids:
        n += 1
    k = len(book) + 1
    while f"Speaker {k}" in names:
        k += 1
    info = SpeakerInfo(f"S{n}", name or f"Speaker {k}", free_color(book))
    return (*book, info), info


def merge_speakers(
    book: SpeakerBook, utterances: Sequence[Utterance], sources: Iterable[str], target: str
) -> tuple[SpeakerBook, tuple[Utterance, ...]]:
    """Every utterance of `sources` given to `target`; the source speakers leave the book."""
    _require(book, target)
    gone = {s for s in sources if s != target}
    for sid in gone:
        _require(book, sid)
    new_book = tuple(s for s in book if s.id not in gone)
    new_utterances = tuple(replace(u, speaker=target) if u.speaker in gone else u for u in utterances)
    return new_book, new_utterances


@dataclass(frozen=True, slots=True)
class Lane:
    """One row of the waveform's speaker lanes: a speaker's turns."""

    name: str
    color: str
    starts: tuple[float, ...]
    ends: tuple[float, ...]
    key: str | None = None  # the speaker id (None: the unassigned lane)


def speaker_lanes(book: SpeakerBook, utterances: Sequence[Utterance]) -> list[Lane]:
    """A lane per speaker in book order (speakers without turns too), then one for unassigned turns."""
    turns: dict[str | None, list[Utterance]] = {}
    for u in utterances:
        turns.setdefault(u.speaker, []).append(u)
    lanes = [_lane(s.name, s.color, turns.pop(s.id, []), s.id) for s in book]
    unassigned = [u for sid, us in turns.items() for u in us if sid is None or find(book, sid) is None]
    if unassigned:
        unassigned.sort(key=lambda u: u.start)
        lanes.append(_lane(UNASSIGNED_NAME, UNASSIGNED_COLOR, unassigned, None))
    return lanes


def _lane(name: str, color: str, turns: Sequence[Utterance], key: str | None) -> Lane:
    return Lane(name, color, tuple(u.start for u in turns), tuple(u.end for u in turns), key)


def talk_time(utterances: Iterable[Utterance]) -> dict[str | None, float]:
    """Seconds spoken per speaker id (None: unassigned)."""
    totals: dict[str | None, float] = {}
    for u in utterances:
        totals[u.speaker] = totals.get(u.speaker, 0.0) + u.duration
    return totals


def tally(stats: dict[str | None, tuple[float, int]], utterances: Iterable[Utterance], sign: int) -> None:
    """Add (`sign` +1) or remove (-1) `utterances` from `stats`: speaker id → (seconds, turns)."""
    for u in utterances:
        seconds, turns = stats.get(u.speaker, (0.0, 0))
        seconds, turns = seconds + sign * u.duration, turns + sign
        if turns:
            stats[u.speaker] = (max(seconds, 0.0), turns)
        else:
            stats.pop(u.speaker, None)


def moved_speakers(old: Sequence[Utterance], new: Sequence[Utterance]) -> set[str | None]:
    """Speakers whose turns differ between `old` and `new` rows (a text edit moves none)."""
    spans_old = {(u.start, u.end, u.speaker) for u in old}
    spans_new = {(u.start, u.end, u.speaker) for u in new}
    return {span[2] for span in spans_old ^ spans_new}


def _require(book: SpeakerBook, speaker_id: str) -> SpeakerBook:
    if find(book, speaker_id) is None:
        raise ValueError(f"unknown speaker {speaker_id!r}")
    return book
