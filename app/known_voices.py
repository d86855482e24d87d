"""Known voices as the app uses them (no Qt): the people the Known Voices window lists, a
transcript speaker's voice remembered under a name, and how a recognised name is shown.

- `user_library()`: the voice library in the user's data folder, the one the "Known voices"
  setting names speakers from (`engine.voices.library_path(None)`).
- `rows(library)`: one `VoiceRow` (name, number of samples, date added) per person, by name.
- `remember(library, transcript, speaker_id, recording, name, embedder)`: that speaker's own
  speech (stretches others talk over left out, `engine.voices.enrol`) stored under `name` —
  added to that person's samples when the library knows the name already. ValueError for a
  name that cannot name a voice or too little speech; `VoiceLibraryError` for a library that
  cannot be written. Nothing is stored on any error.
- `recognised_text(name, score)`: the tooltip of a speaker named after a known voice;
  `recognised_short(name, score)` the line its menu opens with.
- `default_label(book, speaker_id)`: the "Speaker N" a wrongly recognised speaker goes back to.
"""

from __future__ import annotations

from dataclasses import dataclass

from app import speakers as sp
from engine.types import Recording, Transcript
from engine.voices import VoiceEmbedder, VoiceLibrary, library_path
from engine.voices.enrol import samples_from_transcript
from engine.voices.samples import check_name


@dataclass(frozen=True, slots=True)
class VoiceRow:
    """A known person as the Known Voices window lists them."""

    name: str
    samples: int
    added: str  # the date the person was first stored, YYYY-MM-DD

    @property
    def text(self) -> str:
        count = f"{self.samples} sample" + ("" if self.samples == 1 else "s")
        return f"{self.name} — {count}, added {self.added}"


def user_library() -> VoiceLibrary:
    return VoiceLibrary(library_path(None))


def rows(library: VoiceLibrary) -> list[VoiceRow]:
    if not library.exists():
        return []
    people = sorted(library.voices(), key=lambda v: v.name.casefold())
    return [VoiceRow(v.name, len(v.samples), v.added[:10]) for v in people]


def remember(
    library: VoiceLibrary, transcript: Transcript, speaker_id: str, recording: Recording, name: str,
    embedder: VoiceEmbedder,
) -> int:  # fmt: skip
    """Store `speaker_id`'s voice under `name`; the number of samples added."""
    clean = check_name(name)
    samples = samples_from_transcript(transcript, speaker_id, recording, embedder)
    library.add(clean, samples)
    return len(samples)


def recognised_text(name: str, score: float) -> str:
    return f"Recognised as {name} from your known voices (similarity {score:.2f})"


def recognised_short(name: str, score: float) -> str:
    return f"Recognised as {name} ({score:.2f})"


def default_label(book: sp.SpeakerBook, speaker_id: str) -> str:
    """"Speaker N", N the speaker's place in the book, or the next free number."""
    names = {s.name for s in book}
    place = next(i for i, s in enumerate(book) if s.id == speaker_id) + 1
    while f"Speaker {place}" in names:
        place += 1
    return f"Speaker {place}"
