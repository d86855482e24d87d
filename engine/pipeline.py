"""The one transcription pipeline the CLI and the GUI both run.

    file ─► load (decode, mono, resample) ─► VAD ─► chunk ─► backend ─► speakers + stitch ─► Transcript

`Pipeline.prepare` does the cheap stages (load, VAD, chunk; `plan` the last alone, for speech found
elsewhere) so a view can show the waveform, speech regions and chunk boundaries before inference;
`Pipeline.transcribe` does the rest; `Pipeline.run` does both. Progress goes to a plain callback
(`on_progress(Progress)`), and a `threading.Event` cancels between units of work with
`engine.errors.Cancelled`. The backend (and its loaded model) lives as long as the pipeline, so
several files reuse one model; so does the diarizer (`PipelineConfig.speakers` chooses it; "none"
skips the SPEAKERS stage). For a backend that labels no speakers (whisper) the diarizer runs in a
second thread while the backend decodes (`speakers_alongside`): the result is the same, the wall
time shorter when a core is free; meanwhile numpy's BLAS keeps to one thread, so the two stay
within the decoder's thread budget. With `SpeakerConfig.voices` set, the final speakers are then
named after known voices (`engine.voices`), whichever backend and diarizer found them; the library
is checked before inference.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.audio.chunking import ChunkingConfig, energy_quietest, plan_chunks
from engine.audio.io import load_audio
from engine.audio.vad import PauseDetector, SileroVad, SpeechDetector
from engine.backends import base as hooks
from engine.backends import build_backend, create_backend
from engine.backends.base import Backend, check_cancel
from engine.pipeline_config import PipelineConfig
from engine.progress import format_clock
from engine.speakers import create_diarizer
from engine.speakers.attribution import attribute_speakers
from engine.speakers.diarization import Diarization, Diarizer
from engine.spoken_language import spoken_language
from engine.stitching import removals
from engine.types import (
    Chunk,
    ChunkResult,
    Progress,
    Recording,
    Speaker,
    SpeechSegment,
    Stage,
    Transcript,
    Utterance,
)
from engine.voices import create_recogniser

ProgressCallback = Callable[[Progress], None]


@dataclass(frozen=True, slots=True, eq=False)
class Prepared:
    """A recording ready for inference: audio, where the speech is, and how it is chunked."""

    recording: Recording
    speech: tuple[SpeechSegment, ...]
    chunks: tuple[Chunk, ...]


class Pipeline:
    def __init__(
        self,
        backend: Backend,
        config: PipelineConfig | None = None,
        detector: SpeechDetector | None = None,
        diarizer: Diarizer | None = None,
    ) -> None:
        self.backend = backend
        self.config = config or PipelineConfig()
        self.detector = detector or SileroVad(self.config.vad)
        # a given diarizer object wins; otherwise the one the config names (None for "none")
        self.diarizer = diarizer if diarizer is not None else create_diarizer(self.config.speakers)
        self.voices = create_recogniser(self.config.speakers, self.diarizer)

    @classmethod
    def create(
        cls, backend: str = "whisper", config: PipelineConfig | None = None, **backend_options: Any
    ) -> Pipeline:
        """A pipeline around backend `backend` built from its config's fields (see engine.backends)."""
        return cls(create_backend(backend, **backend_options), config)

    @classmethod
    def from_recipe(cls, recipe: Any) -> Pipeline:
        """The pipeline an `engine.recipe.Recipe` describes (its backend loads on first use)."""
        return cls(build_backend(recipe.backend, recipe.backend_config), recipe.pipeline)

    @property
    def chunking(self) -> ChunkingConfig:
        seconds = self.config.chunk_seconds or self.backend.default_chunk_seconds
        if seconds > self.backend.max_chunk_seconds:
            raise ValueError(
                f"the {self.backend.name} backend takes at most {self.backend.max_chunk_seconds:g} s "
                f"per chunk, not {seconds:g}"
            )
        return ChunkingConfig(max_seconds=seconds, pad_seconds=self.config.chunk_pad)

    def run(
        self,
        source: str | Path | Recording,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Transcript:
        """Transcribe a file (or a decoded recording) end to end; a backend that can tell it will
        fail (`check_ready`, e.g. a server that is down) fails before any audio is decoded."""
        self.check_ready()
        return self.transcribe(self.prepare(source, on_progress, cancel), on_progress, cancel)

    def check_ready(self) -> None:
        """Raise now, before any work, when the backend can tell it will fail (a server that is
        down, a checkpoint that cannot be had); callers that run `prepare` and `transcribe`
        separately (the app) call it first."""
        hooks.check_ready(self.backend)

    def prepare(
        self,
        source: str | Path | Recording,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Prepared:
        report = on_progress or (lambda p: None)
        # 1) load: decode, mix down, resample to the backend's rate
        recording = source if isinstance(source, Recording) else self.load(source, report, cancel)
        # 2) voice activity (reported at once, so stage times count the work before its first block)
        check_cancel(cancel)
        report(Progress(Stage.VAD, 0, recording.duration))
        speech, pauses = self._detect(recording, report, cancel)
        prepared = self.plan(recording, speech, pauses)  # 3) chunks
        report(Progress(Stage.CHUNK, 1, 1, f"{len(prepared.chunks)} chunks"))
        return prepared

    def plan(
        self, recording: Recording, speech: Sequence[SpeechSegment], pauses: Sequence[float] = ()
    ) -> Prepared:
        """`speech` (a live recording's, or `prepare`'s) in chunks, cut in silence, or one chunk."""
        if self.config.single_pass:
            chunks = [single_chunk(recording, speech, self.backend.max_chunk_seconds)]
        else:
            quietest = energy_quietest(recording)
            chunks = plan_chunks(speech, self.chunking, recording.duration, quietest, pauses)
        return Prepared(recording, tuple(speech), tuple(chunks))

    def _detect(
        self, recording: Recording, report: ProgressCallback, cancel: threading.Event | None
    ) -> tuple[list[SpeechSegment], list[float]]:
        """Speech segments, and for a backend that packs its windows at short pauses
        (`packs_at_pauses`, whisper) the pauses inside speech the detector saw."""
        def progress(done: float, total: float) -> None:
            report(Progress(Stage.VAD, done, total))

        packs = hooks.packs_at_pauses(self.backend) and not self.config.single_pass
        if packs and isinstance(self.detector, PauseDetector):
            return self.detector.detect_with_pauses(recording, progress, cancel)
        return self.detector.detect(recording, progress, cancel), []

    def load(
        self,
        path: str | Path,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Recording:
        return load_recording(
            path, self.backend.sample_rate, self.config.audio_stream, on_progress, cancel, self.config.channel
        )

    def transcribe(
        self,
        prepared: Prepared,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Transcript:
        report = on_progress or (lambda p: None)
        if self.diarizer is not None:  # a missing speaker model fails now, not after inference
            self.diarizer.load()
        if self.voices is not None:  # so does an unreadable voice library
            self.voices.load()
        # 4) inference, chunk by chunk as the backend finishes them; the diarization of a backend
        #    that labels no speakers needs only the audio, so it runs alongside (same result)
        side = ThreadPoolExecutor(max_workers=1, thread_name_prefix="speakers")
        try:
            early = self._diarize_alongside(side, prepared, cancel)
            with _one_blas_thread(early is not None):  # the decoder's threads have the cores
                results = self.infer(prepared, report, cancel)
                diarization = None
                if early is not None:
                    report(Progress(Stage.SPEAKERS, 0, 1, f"diarizing ({self.diarizer.name})"))
                    diarization = early.result()
        finally:
            side.shutdown(wait=False, cancel_futures=True)
        # 5) speakers (diarization, cross-chunk reconciliation or word-level assignment) and
        #    stitching into absolute, merged utterances
        check_cancel(cancel)
        utterances = attribute_speakers(
            prepared.recording,
            prepared.speech,
            results,
            self.diarizer,
            self.backend.labels_speakers,
            self.config.speakers.count,
            self.config.stitch,
            report,
            cancel,
            diarization,
            self.config.speakers.stitching,
        )
        report(Progress(Stage.STITCH, 1, 1))
        removed = removals(results, utterances, self.config.stitch)
        transcript = self._transcript(prepared, utterances)
        if self.voices is not None:
            report(Progress(Stage.SPEAKERS, 0, 1, "recognising known voices"))
            transcript = self.voices.name(transcript, prepared.recording, cancel)
        return replace(transcript, language=spoken_language(results), removed=removed)

    def _diarize_alongside(
        self, side: ThreadPoolExecutor, prepared: Prepared, cancel: threading.Event | None
    ) -> Future[Diarization] | None:
        if self.diarizer is None or self.backend.labels_speakers or not self.config.speakers_alongside:
            return None
        count = self.config.speakers.count
        return side.submit(self.diarizer.diarize, prepared.recording, prepared.speech, count, None, cancel)

    def infer(
        self, prepared: Prepared, report: ProgressCallback, cancel: threading.Event | None
    ) -> list[ChunkResult]:
        chunks = prepared.chunks
        report(Progress(Stage.INFER, 0, len(chunks), f"loading {self.backend.describe()}"))
        results: list[ChunkResult] = []
        for result in self.backend.transcribe(prepared.recording, chunks, cancel):
            results.append(result)
            report(Progress(Stage.INFER, len(results), len(chunks), partial=result))
        return results

    def _transcript(self, prepared: Prepared, utterances: tuple[Utterance, ...]) -> Transcript:
        recording = prepared.recording
        return Transcript(
            utterances=utterances,
            speakers=default_speakers(utterances),
            duration=recording.duration,
            source=str(recording.source) if recording.source else None,
            model=self.backend.describe(),
            chunks=prepared.chunks,
        )


@contextmanager
def _one_blas_thread(enabled: bool) -> Iterator[None]:
    """numpy's BLAS on one thread while the block runs (if `enabled`): with the diarizer beside the
    decoder, its matrix products would otherwise start a BLAS thread per core next to the decoder's
    own (oversubscribed cores spin and wait on each other)."""
    if not enabled:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def load_recording(
    path: str | Path,
    sample_rate: int,
    stream: int | None = None,
    on_progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    channel: str | int = "mix",
) -> Recording:
    """Decode `stream` of a file (None: its default stream; `channel`, or the mix of its channels)
    at `sample_rate`, reporting LOAD."""
    report = on_progress or (lambda p: None)
    report(Progress(Stage.LOAD, 0, 1))
    return load_audio(
        Path(path),
        sample_rate,
        stream=stream,
        channel=channel,
        progress=lambda done, total: report(Progress(Stage.LOAD, done, total)),
        cancel=cancel,
    )


def single_chunk(recording: Recording, speech: Sequence[SpeechSegment], limit: float) -> Chunk:
    """The whole recording as one chunk; refused when the model cannot take it in one pass."""
    if recording.duration > limit:
        raise ValueError(
            f"the recording lasts {format_clock(recording.duration)}, longer than the "
            f"{format_clock(limit)} a single pass can take; use chunked mode"
        )
    return Chunk(index=0, start=0.0, end=recording.duration, speech=tuple(speech))


def default_speakers(utterances: tuple[Utterance, ...]) -> tuple[Speaker, ...]:
    """One `Speaker` per distinct id, in order of first appearance, named "Speaker 1", "Speaker 2"…"""
    ids = list(dict.fromkeys(u.speaker for u in utterances if u.speaker is not None))
    return tuple(Speaker(id=s, name=f"Speaker {i + 1}") for i, s in enumerate(ids))
