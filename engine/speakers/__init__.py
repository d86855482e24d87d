"""Speakers: diarization, cross-chunk reconciliation and word-level assignment.

`DIARIZERS` names the diarizers (`DIARIZER_CHOICES`: those and "none", what a user may choose);
`create_diarizer(SpeakerConfig)` builds the chosen one (None for "none"). Models load on first
use, so creating a diarizer is cheap:
- "embedded" (default): resemblyzer's GE2E encoder (weights in its wheel) + spectral clustering;
- "pyannote": a pyannote.audio pipeline from a local folder or the hub (token needed).
`engine.speakers.attribution.attribute_speakers` is the pipeline's SPEAKERS stage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.speakers.diarization import Diarizer, SpeakerCount

DIARIZER_NAMES = ("embedded", "pyannote", "none")
STITCHINGS = ("one-to-one", "boundary")  # cross-chunk speakers: reconcile.py, or the paper's boundary.py
DEFAULT_VOICES = ":default:"  # `SpeakerConfig.voices`: the voice library in the user's data folder


@dataclass(frozen=True, slots=True)
class SpeakerConfig:
    """How speakers are found. `diarizer`: "embedded", "pyannote" or "none" (no speakers)."""

    diarizer: str = "embedded"
    num_speakers: int | None = None
    min_speakers: int | None = None
    max_speakers: int | None = None
    pyannote: str | None = None  # pyannote pipeline: local folder or hub id (None: the default id)
    hf_token: str | None = None  # hub token for pyannote (None: HF_TOKEN from the environment)
    stitching: str = "one-to-one"  # how chunk-local speakers become global ones (STITCHINGS)
    # name speakers after known voices (engine.voices): a library file, DEFAULT_VOICES, or None (off)
    voices: str | None = None

    def __post_init__(self) -> None:
        if self.diarizer not in DIARIZER_NAMES:
            raise ValueError(
                f"unknown diarizer {self.diarizer!r}; choose one of: {', '.join(DIARIZER_NAMES)}"
            )
        if self.stitching not in STITCHINGS:
            choices = ", ".join(STITCHINGS)
            raise ValueError(f"unknown speaker stitching {self.stitching!r}; choose one of: {choices}")
        SpeakerCount(self.num_speakers, self.min_speakers, self.max_speakers)  # validates the numbers
        if self.voices is not None and not self.voices.strip():
            raise ValueError("the voice library path is empty")
        if self.voices is not None and self.diarizer == "none":
            raise ValueError("naming known voices needs a diarizer; --diarizer none finds no speakers")

    @property
    def count(self) -> SpeakerCount | None:
        if self.num_speakers is None and self.min_speakers is None and self.max_speakers is None:
            return None
        return SpeakerCount(self.num_speakers, self.min_speakers, self.max_speakers)


def _embedded(config: SpeakerConfig) -> Diarizer:
    from engine.speakers.embedded import EmbeddedDiarizer

    return EmbeddedDiarizer()


def _pyannote(config: SpeakerConfig) -> Diarizer:
    from engine.speakers.pyannote import PyannoteConfig, PyannoteDiarizer

    options = {"pipeline": config.pyannote, "token": config.hf_token}
    return PyannoteDiarizer(PyannoteConfig(**{k: v for k, v in options.items() if v is not None}))


DIARIZERS: dict[str, Callable[[SpeakerConfig], Diarizer]] = {
    "embedded": _embedded,
    "pyannote": _pyannote,
}
DIARIZER_CHOICES = (*DIARIZERS, "none")


def create_diarizer(config: SpeakerConfig) -> Diarizer | None:
    """The diarizer `config` names, or None for "none"."""
    factory = DIARIZERS.get(config.diarizer)
    return factory(config) if factory is not None else None
