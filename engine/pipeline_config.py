"""`PipelineConfig`: the pipeline's own settings, as one frozen value validated when it is built.

How the recording is read (`audio_stream`, `channel`), cut (`chunk_seconds`, `chunk_pad`,
`single_pass`, `vad`), stitched (`stitch`) and given speakers (`speakers`, `speakers_alongside`);
the backend's settings are its own config. A bad value raises `ValueError` naming what is allowed.
`engine.pipeline.Pipeline` runs it (and re-exports it); this module loads no model and no torch,
so the option table and the app build and check one cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.audio.channels import parse_channel
from engine.audio.chunking import ChunkingConfig
from engine.audio.vad import VadConfig
from engine.speakers import SpeakerConfig
from engine.stitching import StitchConfig


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    chunk_seconds: float | None = None  # None: the backend's own chunk size
    chunk_pad: float = 0.2
    single_pass: bool = False  # the whole recording as one chunk (no VAD chunking)
    vad: VadConfig = field(default_factory=VadConfig)
    stitch: StitchConfig = field(default_factory=StitchConfig)
    speakers: SpeakerConfig = field(default_factory=SpeakerConfig)
    speakers_alongside: bool = True  # diarize while the backend runs (backends without speakers)
    audio_stream: int | None = None  # which audio stream of a file (from 0); None: the default one
    channel: str | int = "mix"  # "mix" (their mean), "left", "right" or a channel number from 0

    def __post_init__(self) -> None:
        parse_channel(self.channel)  # ValueError naming what is allowed
        stream = self.audio_stream
        if stream is not None and not (isinstance(stream, int) and stream >= 0):
            raise ValueError(f"the audio stream is a number from 0, got {self.audio_stream!r}")
        if self.chunk_seconds is not None:
            ChunkingConfig(max_seconds=self.chunk_seconds, pad_seconds=self.chunk_pad)
        if self.single_pass and self.chunk_seconds is not None:
            raise ValueError("a chunk size makes no sense in single-pass mode")
