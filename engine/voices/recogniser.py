"""Naming a transcript's speakers from the voice library, and turning speech into voice samples.

Contract:
- `VoiceEmbedder` embeds groups of (start, end) spans of a recording (any sample rate) with the
  GE2E speaker encoder (`engine.speakers.embedding`); its `model` (`GE2E`) is stamped on every
  sample, whichever diarizer found the speakers, so a library works with every diarizer/backend.
- `VoiceRecogniser.load()` reads the library now and raises `VoiceLibraryError` when it is missing,
  unreadable, or holds only voices of another embedding model (never compared), so a bad library
  fails before a long inference, not after it.
- `VoiceRecogniser.name(transcript, recording)` runs after stitching on the final speaker ids:
  each speaker's own speech (overlaps cut out, at most `MAX_SECONDS`, at least
  `MatchConfig.min_seconds`) gives one embedding, compared with every known person's centroid by
  `match_speakers`. Recognised speakers get the person's name and the score; the others keep
  "Speaker N" and no score. The library is read afresh each time: a removed voice is never named.
- The library is any `VoiceSource` (`path`, `exists()`, `voices()`): the user's SQLite
  `VoiceLibrary`, or a server request's reference clips (`engine.serve.known_speakers`).
- `enrolment_samples(recording, spans, source, embedder)` makes one `VoiceSample` per ~20 s group of
  a speaker's speech, each with its recording, time range, and the recording's audio stream and
  channel (as `Recording` says which were decoded); too little speech raises ValueError.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.audio.resample import resample
from engine.errors import check_cancel
from engine.speakers.embedding import EMBEDDING_DIM, SAMPLE_RATE, SpeakerEncoder
from engine.types import Recording, Transcript
from engine.voices.library import VoiceLibraryError
from engine.voices.matching import MatchConfig, match_speakers
from engine.voices.samples import EmbeddingModel, KnownVoice, VoiceSample
from engine.voices.speech import Span, groups, longest_first, own_spans, seconds

GE2E = EmbeddingModel("resemblyzer-ge2e", "1", EMBEDDING_DIM)
MAX_SECONDS = 120.0  # of one speaker's speech embedded for recognition
SAMPLE_SECONDS = 20.0  # of speech per stored sample
MIN_ENROL_SECONDS = 3.0

log = logging.getLogger(__name__)


class VoiceSource(Protocol):
    """Where known voices come from: the library file, or a request's reference clips."""

    path: Path

    def exists(self) -> bool: ...

    def voices(self) -> Sequence[KnownVoice]: ...


class VoiceEmbedder:
    """One unit embedding per group of spans, from the GE2E encoder."""

    model = GE2E

    def __init__(self, encoder: SpeakerEncoder | None = None) -> None:
        self.encoder = encoder or SpeakerEncoder()

    def load(self) -> None:
        self.encoder.load()

    def embed(
        self,
        recording: Recording,
        span_groups: Sequence[Sequence[Span]],
        cancel: threading.Event | None = None,
    ) -> list[np.ndarray | None]:
        def audio(group: Sequence[Span]) -> np.ndarray:
            pieces = [recording.slice(a, b) for a, b in group]
            joined = np.concatenate(pieces) if pieces else np.zeros(0, np.float32)
            rate = recording.sample_rate
            return joined if rate == SAMPLE_RATE else resample(joined, rate, SAMPLE_RATE)

        return self.encoder.embed_pieces((audio(g) for g in span_groups), cancel=cancel)


class VoiceRecogniser:
    """Names found speakers after the people in a voice library (see the module contract)."""

    def __init__(
        self, library: VoiceSource, embedder: VoiceEmbedder | None = None, config: MatchConfig | None = None
    ) -> None:
        self.library = library
        self.embedder = embedder or VoiceEmbedder()
        self.config = config or MatchConfig()

    def load(self) -> None:
        if not self.library.exists():
            raise VoiceLibraryError(
                f"there is no voice library at {self.library.path} yet: remember a voice first "
                '(murmur voices add NAME --from TRANSCRIPT.json --speaker "Speaker 2")'
            )
        comparable(self.library.voices(), self.embedder.model, self.library)
        self.embedder.load()

    def name(
        self, transcript: Transcript, recording: Recording, cancel: threading.Event | None = None
    ) -> Transcript:
        """`transcript` with its recognised speakers named and scored."""
        centroids = comparable(self.library.voices(), self.embedder.model, self.library)
        ids = [s.id for s in transcript.speakers]
        spans = {sid: own_spans(transcript.utterances, sid) for sid in ids}
        heard = [sid for sid in ids if seconds(spans[sid]) >= self.config.min_seconds]
        if not centroids or not heard:
            return transcript
        vectors = self.embedder.embed(
            recording, [longest_first(spans[s], MAX_SECONDS) for s in heard], cancel
        )
        check_cancel(cancel)
        found = {s: v for s, v in zip(heard, vectors, strict=True) if v is not None}
        matches = match_speakers(found, centroids, self.config)
        speakers = tuple(
            replace(s, name=matches[s.id].name, score=round(matches[s.id].score, 4)) if s.id in matches else s
            for s in transcript.speakers
        )
        return replace(transcript, speakers=speakers)


def comparable(
    voices: Sequence[KnownVoice], model: EmbeddingModel, library: VoiceSource
) -> dict[str, np.ndarray]:
    """Each person's centroid of `model` embeddings; a library whose voices all come from another
    model raises VoiceLibraryError (they can never be compared), and people with none are skipped."""
    centroids = {v.name: c for v in voices if (c := v.centroid(model)) is not None}
    if voices and not centroids:
        others = ", ".join(sorted({str(m) for v in voices for m in v.models()}))
        raise VoiceLibraryError(
            f"the voices in {library.path} were embedded with the speaker model {others}; this Murmur "
            f"embeds with {model}, and embeddings of different models are never compared: remove "
            "those voices and add them again"
        )
    skipped = [v.name for v in voices if v.name not in centroids]
    if skipped:
        log.warning("not compared (stored with another speaker model): %s", ", ".join(skipped))
    return centroids


def enrolment_samples(
    recording: Recording, spans: Sequence[Span], source: str | None, embedder: VoiceEmbedder
) -> list[VoiceSample]:
    """Voice samples of one speaker's speech (see the module contract)."""
    heard = seconds(spans)
    if heard < MIN_ENROL_SECONDS:
        raise ValueError(
            f"only {heard:.1f} s of this voice, too little to remember it (at least {MIN_ENROL_SECONDS:g} s)"
        )
    parts = groups(list(spans), SAMPLE_SECONDS)
    vectors = embedder.embed(recording, parts)
    where = {"stream": recording.stream, "channel": recording.channel}  # of the file, to play it back
    return [
        VoiceSample(v, embedder.model, source, round(part[0][0], 3), round(part[-1][1], 3), **where)
        for part, v in zip(parts, vectors, strict=True)
        if v is not None
    ]
