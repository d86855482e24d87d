"""Data that crosses stages: recording → speech segments → chunks → chunk results → transcript.

Every type here is a frozen dataclass; edits make new values with `dataclasses.replace`. Times are
seconds (float). Chunk results carry *chunk-relative* times and *chunk-local* speaker ids; stitching
(`engine.stitching`) is the one place that turns them into absolute times and global speakers.
This module imports only the standard library and numpy.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass(frozen=True, slots=True, eq=False)
class Recording:
    """Decoded mono audio. `samples` is float32, shape (T,), in [-1, 1]."""

    samples: np.ndarray  # (T,) float32
    sample_rate: int
    source: Path | None = None
    stream: int | None = None  # which audio stream of `source` was decoded (None: its default one)
    channel: int | None = None  # which channel of it (None: the mix of its channels)

    def __post_init__(self) -> None:
        if self.samples.ndim != 1:
            raise ValueError(f"Recording samples must be 1-D (mono), got shape {self.samples.shape}")
        if self.sample_rate <= 0:
            raise ValueError(f"sample rate must be positive, got {self.sample_rate}")

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate

    def index(self, t: float) -> int:
        """Sample index of time `t` (seconds), clamped to the recording."""
        return min(max(round(t * self.sample_rate), 0), len(self.samples))

    def slice(self, start: float, end: float) -> np.ndarray:
        """Samples between `start` and `end` seconds (a view, no copy)."""
        return self.samples[self.index(start) : self.index(end)]


@dataclass(frozen=True, slots=True, order=True)
class SpeechSegment:
    """A span of speech found by voice-activity detection, absolute seconds."""

    start: float
    end: float

    def __post_init__(self) -> None:
        if not self.end >= self.start >= 0:
            raise ValueError(f"invalid speech segment [{self.start}, {self.end}]")

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Chunk:
    """One contiguous window of the recording sent to a backend (absolute seconds).

    `speech` lists the VAD segments the chunk covers; silence between chunks is skipped.
    """

    index: int
    start: float
    end: float
    speech: tuple[SpeechSegment, ...] = ()

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Word:
    """A word with its timing; absolute seconds in utterances, chunk-relative in chunk results."""

    start: float
    end: float
    text: str
    probability: float | None = None


@dataclass(frozen=True, slots=True)
class Segment:
    """One piece of backend output inside a chunk: chunk-relative times, chunk-local speaker.

    `flags` records repairs made while parsing (e.g. "inverted", "out_of_range", "partial").
    """

    start: float
    end: float
    text: str
    speaker: int | None = None
    words: tuple[Word, ...] = ()
    flags: tuple[str, ...] = ()


class FinishReason(enum.StrEnum):
    """Why decoding of a chunk stopped."""

    EOS = "eos"  # the model ended its output
    LENGTH = "length"  # the token budget ran out
    LOOP = "loop"  # a repetition loop was detected and could not be recovered
    ERROR = "error"  # the backend failed on this chunk; its segments may be empty


@dataclass(frozen=True, slots=True)
class GenerationStats:
    """Cost of producing one chunk result."""

    prompt_tokens: int = 0
    generated_tokens: int = 0
    prefill_seconds: float = 0.0
    decode_seconds: float = 0.0
    kv_kept_fraction: float | None = None  # mean over decode steps of kept/logical KV, when evicting
    kv_kept_last: float | None = None  # kept/logical KV at the last step (the paper's "kept %")
    kv_peak_entries: int | None = None  # most KV entries (all layers) held at once by the engine
    # speech evicted before the transcript had written it (share of the chunk's speech tokens; seconds)
    speech_lost_fraction: float | None = None
    speech_lost_seconds: float | None = None
    anchor_stopped: bool = False  # speech-anchor: the reply's times ran ahead of its text; eviction stopped
    retries: int = 0
    rolled_back_tokens: int = 0  # output tokens a loop retry threw away (then decoded again)
    salvage_dropped_tokens: int = 0  # tokens cut after the last loop-free point when retries ran out
    batch_rows: int = 0  # rows of the batched decode call that first decoded it (0: not batched, or not told)


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """A backend's output for one chunk. Times relative to the chunk start; speakers chunk-local."""

    chunk: Chunk
    segments: tuple[Segment, ...]
    finish_reason: FinishReason = FinishReason.EOS
    stats: GenerationStats = field(default_factory=GenerationStats)
    raw_text: str = ""
    language: str | None = None  # the language the backend decoded it in, when it reports one (e.g. "de")


@dataclass(frozen=True, slots=True)
class Speaker:
    """A global speaker: a stable id and an editable display name. `score` is the cosine similarity
    to the known voice the name was recognised from (`engine.voices`); None for a name not
    recognised that way (a default label, or one a person gave)."""

    id: str
    name: str
    score: float | None = None


@dataclass(frozen=True, slots=True)
class Utterance:
    """A stretch of speech by one speaker, absolute seconds. `speaker` is a `Speaker.id` or None."""

    start: float
    end: float
    text: str
    speaker: str | None = None
    # compared, not hashed: a set of a long transcript's lines hashed every word of every line
    # (131,000 calls for 2,001 lines at a run's end); lines with equal times, text and speaker
    # are rare enough to share a hash
    words: tuple[Word, ...] = field(default=(), hash=False)

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Removed:
    """What the clean-up steps removed from the model's output on the way to a transcript."""

    boundary_words: int = 0  # text repeated across an adjacent chunk boundary, said once
    merge_words: int = 0  # words lost by speaker assignment or same-speaker merging (should be 0)
    rollback_tokens: int = 0  # model tokens a loop retry threw away and decoded again
    salvage_tokens: int = 0  # model tokens cut after a loop no retry could get past

    def render(self) -> str:
        return (
            f"removed: boundary repeats {self.boundary_words} words · merge {self.merge_words} words · "
            f"loop rollback {self.rollback_tokens} tokens · loop salvage {self.salvage_tokens} tokens"
        )


@dataclass(frozen=True, slots=True)
class Transcript:
    """The product: ordered utterances, the speakers they refer to, and where they came from."""

    utterances: tuple[Utterance, ...]
    speakers: tuple[Speaker, ...] = ()
    duration: float = 0.0
    source: str | None = None
    model: str | None = None
    language: str = "en"
    chunks: tuple[Chunk, ...] = ()
    removed: Removed = Removed()

    def speaker_name(self, speaker_id: str | None) -> str | None:
        """Display name of a speaker id (the id itself if it has no entry)."""
        if speaker_id is None:
            return None
        for s in self.speakers:
            if s.id == speaker_id:
                return s.name
        return speaker_id

    @property
    def text(self) -> str:
        return " ".join(u.text for u in self.utterances if u.text)


class Stage(enum.StrEnum):
    """Pipeline stages, in order."""

    LOAD = "load"
    VAD = "vad"
    CHUNK = "chunk"
    INFER = "infer"
    SPEAKERS = "speakers"
    STITCH = "stitch"
    EXPORT = "export"


@dataclass(frozen=True, slots=True)
class Progress:
    """A progress report: `completed` of `total` units of `stage` are done.

    `partial` carries a chunk result as soon as it is decoded, so views can show it early.
    """

    stage: Stage
    completed: float
    total: float
    detail: str = ""
    partial: ChunkResult | None = None

    @property
    def fraction(self) -> float:
        return 1.0 if self.total <= 0 else min(max(self.completed / self.total, 0.0), 1.0)


TASKS = ("transcribe", "translate")


@dataclass(frozen=True, slots=True)
class DecodeChoices:
    """What one request asks of the decoder, beside the server's own settings (None: the server's).

    `language` an ISO-639 code the speech is in; `prompt` text that guides spelling and style
    (whisper's initial prompt, VibeVoice's context); `temperature` the sampling temperature to
    start from (0: the backend's deterministic decode); `task` "transcribe" or "translate" (into
    English). Backends honour each choice or refuse it (`engine.serve.decoding`); none is ignored.
    """

    language: str | None = None
    prompt: str | None = None
    temperature: float | None = None
    task: str = "transcribe"

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got {self.task!r}")
        if self.temperature is not None and not 0.0 <= self.temperature <= 1.0:
            raise ValueError(f"temperature must be between 0 and 1, got {self.temperature}")
