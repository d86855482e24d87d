"""The jobs the window gives its worker thread (`app.worker`), and what a load gives back: frozen
records, sent through a queued signal.

`LoadJob` decodes a file and plans it (its speech and chunks, unless a project or the live
recording that made it knows them);
`TranscribeJob` transcribes the loaded recording; `RangeJob` one time range of it with other
settings; `EngineJob` starts the engine process again. `LoadedAudio` is a decoded recording with
its envelope pyramid, for the waveform and the player.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.envelope import EnvelopePyramid
from app.settings import TranscribeSettings
from engine.types import Chunk, Recording, SpeechSegment, Utterance


@dataclass(frozen=True, slots=True)
class LoadJob:
    path: Path
    settings: TranscribeSettings
    speech: tuple[SpeechSegment, ...] | None = None  # known (a project's, a live recording's): no VAD
    chunks: tuple[Chunk, ...] = ()  # none: planned from `speech`
    stream: int | None = None  # which audio stream of the file; None: its default one


@dataclass(frozen=True, slots=True)
class TranscribeJob:
    settings: TranscribeSettings


@dataclass(frozen=True, slots=True)
class RangeJob:
    settings: TranscribeSettings
    start: float
    end: float
    existing: tuple[Utterance, ...]  # the transcript's lines, whose speakers the result keeps


@dataclass(frozen=True, slots=True)
class EngineJob:
    settings: TranscribeSettings  # the engine process is started again with these


@dataclass(frozen=True, slots=True, eq=False)
class LoadedAudio:
    path: Path
    recording: Recording
    envelope: EnvelopePyramid
    stream: int | None = None  # the audio stream of the file it came from; None: the default one
