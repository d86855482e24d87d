"""The boundary between a speech-LLM adapter and a decoder: embeddings in, token ids out.

An adapter (e.g. the VibeVoice backend) turns each chunk into a `DecodeRequest`: the prompt's
input embeddings with the audio features already merged in, where the speech tokens sit, and a
token budget. A `Decoder` — the reference HF `generate` path or Murmur's own engine — yields one
`DecodeResult` per request, as soon as that request finishes, in any order. Decoders know nothing
about text; an adapter may hand them a `SegmentBoundary` so that loop recovery can roll a row back
to its last complete output segment, and a `SpeechAnchor` so that eviction can follow the audio
position its transcript has reached (and the engine can measure speech evicted before it was transcribed).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import torch

from engine.types import FinishReason, GenerationStats

# token ids generated so far → length of the prefix that ends with the last complete segment
SegmentBoundary = Callable[[Sequence[int]], int]


@dataclass(frozen=True, slots=True)
class SegmentTimes:
    """One complete transcript segment as written, in speech tokens from the request's first speech
    token (seconds × the model's speech-token rate; None: the field is missing or unreadable)."""

    start: float | None
    end: float | None = None
    words: int = 0  # words the segment adds to the transcript (0 for text it repeats: a loop)


class AnchorTracker(Protocol):
    """Reads one row's output as it grows and reports the transcript segments it completes."""

    tokens_per_second: float  # speech tokens per second of audio (times are reported in them)

    def feed(self, token_ids: Sequence[int]) -> Sequence[SegmentTimes]:
        """Read further generated tokens; the segments that closed among them, in order.

        A tracker may also have `open() -> SegmentTimes | None`: the segment still being written
        (not closed) that the transcript would keep if the output ended now. The harm meter counts
        it when a row ends (`anchor.RowReader.close`)."""
        ...


# a fresh `AnchorTracker` for one row (used by the `speech-anchor` eviction policy)
SpeechAnchor = Callable[[], AnchorTracker]


@dataclass(frozen=True, slots=True, eq=False)
class DecodeRequest:
    id: int
    inputs_embeds: torch.Tensor  # (P, d) prompt embeddings, audio features merged in
    speech_span: tuple[int, int]  # [start, end) prompt positions holding speech features
    max_new_tokens: int
    # [lo, hi) speech indices (from the span's start) where the VAD found speech; (): all of it
    voiced: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.inputs_embeds.ndim != 2:
            raise ValueError(f"inputs_embeds must be (P, d), got {tuple(self.inputs_embeds.shape)}")
        start, end = self.speech_span
        if not 0 <= start <= end <= self.inputs_embeds.shape[0]:
            raise ValueError(f"speech span {self.speech_span} is outside the prompt")
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be at least 1")
        if any(not 0 <= lo < hi <= end - start for lo, hi in self.voiced):
            raise ValueError(f"voiced spans {self.voiced} must lie inside the {end - start} speech tokens")

    @property
    def prompt_length(self) -> int:
        return int(self.inputs_embeds.shape[0])


@dataclass(frozen=True, slots=True)
class DecodeResult:
    id: int
    token_ids: tuple[int, ...]  # generated tokens, end-of-sequence token excluded
    finish_reason: FinishReason
    stats: GenerationStats = field(default_factory=GenerationStats)


class Decoder(Protocol):
    """Greedy decoding of many requests with a bounded batch."""

    def decode(
        self, requests: Iterable[DecodeRequest], cancel: threading.Event | None = None
    ) -> Iterator[DecodeResult]: ...
