"""The VibeVoice-ASR backend: chunks of 24 kHz audio in, speaker-labelled chunk results out.

For each chunk: its samples → a prompt stating the chunk's duration (and the user's context
terms) → a `DecodeRequest` (prompt embeddings with the audio features merged in, a token budget
from the chunk's duration) → the decoder chosen by `config.engine` → the reply's tokens → parsed
`Segment`s with chunk-relative times and the model's own chunk-local integer speakers. Requests
are built lazily as the decoder asks for them, so only about one batch of embeddings exists at a
time; `transcribe_pieces` does the same for chunks of several recordings at once (a Ray
worker's batch), so rows refill across recordings. Results are yielded as the decoder finishes
them; each records its finish reason (EOS, LENGTH, LOOP), its cost and the reply text. In
single-pass mode the pipeline sends the whole recording as one chunk; recordings longer than an
hour (`max_chunk_seconds`) are refused there.
The model loads on first use and stays loaded; heavy imports happen only then.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from engine.backends.base import check_cancel
from engine.backends.vibevoice.budget import token_budget
from engine.backends.vibevoice.config import SAMPLE_RATE, VibeVoiceConfig
from engine.backends.vibevoice.parsing import parse_reply
from engine.errors import ModelLoadError, OutOfMemoryError
from engine.types import Chunk, ChunkResult, Recording


class VibeVoiceBackend:
    """VibeVoice-ASR through transformers' native classes (see the module docstring)."""

    name = "vibevoice"
    sample_rate = SAMPLE_RATE
    default_chunk_seconds = 300.0
    max_chunk_seconds = 3600.0  # the model's single-pass limit (one hour)
    labels_speakers = True

    def __init__(self, config: VibeVoiceConfig | None = None) -> None:
        self.config = config or VibeVoiceConfig()
        self._loaded: Any = None
        self._decoder: Any = None

    def describe(self) -> str:
        if self.config.engine == "server":
            return f"VibeVoice-ASR {self.config.server_model} at {self.config.server}"
        return f"VibeVoice-ASR {self.config.model}"

    def check_ready(self) -> None:
        """Fail at once, before any audio is decoded, when the server cannot be reached or the
        checkpoint is neither local nor downloadable now."""
        if self.config.engine == "server":
            from engine.backends.vibevoice.server_client import ServerClient

            ServerClient(self.config).check_reachable()
        else:
            from engine.backends.vibevoice.availability import check_available

            missing = [m for m in ("torch", "transformers") if not _installed(m)]
            if missing:
                raise ModelLoadError(_LEFT_OUT.format(missing[0]))
            check_available(self.config)

    def transcribe(
        self,
        recording: Recording,
        chunks: Sequence[Chunk],
        cancel: threading.Event | None = None,
    ) -> Iterator[ChunkResult]:
        yield from self.transcribe_pieces([(recording, c) for c in chunks], cancel)

    def transcribe_pieces(
        self, pieces: Sequence[tuple[Recording, Chunk]], cancel: threading.Event | None = None
    ) -> Iterator[ChunkResult]:
        """Chunks of several recordings as one decode stream: the batch refills across recordings."""
        rates = {r.sample_rate for r, _ in pieces} - {self.sample_rate}
        if rates:
            raise ValueError(f"VibeVoice-ASR needs {self.sample_rate} Hz audio, got {min(rates)}")
        check_cancel(cancel)
        if self.config.engine == "server":  # decoding happens on a VibeVoice vLLM server
            from engine.backends.vibevoice.server_client import ServerClient

            yield from ServerClient(self.config).transcribe_pieces(pieces, cancel)
            return
        loaded, decoder = self._load()
        audible = [(r, c) for r, c in pieces if len(r.slice(c.start, c.end)) > 0]
        silent = [c for r, c in pieces if len(r.slice(c.start, c.end)) == 0]
        yield from (ChunkResult(chunk=c, segments=()) for c in silent)  # no samples: nothing said
        encode_seconds: dict[int, float] = {}
        requests = self._requests(loaded, audible, encode_seconds, cancel)
        try:
            for result in decoder.decode(requests, cancel):
                chunk = audible[result.id][1]
                yield self._chunk_result(loaded, chunk, result, encode_seconds.pop(result.id, 0.0))
        except Exception as exc:
            import torch

            if isinstance(exc, torch.OutOfMemoryError):
                raise OutOfMemoryError(
                    "the GPU ran out of memory; try a smaller --batch-size or --chunk-seconds"
                ) from exc
            raise

    def _requests(
        self,
        loaded: Any,
        pieces: Sequence[tuple[Recording, Chunk]],
        encode_seconds: dict[int, float],
        cancel: threading.Event | None,
    ) -> Iterator[Any]:
        from engine.backends.vibevoice.anchor import voiced_spans
        from engine.backends.vibevoice.inputs import AcousticNoise, build_request

        cfg = self.config
        for i, (recording, chunk) in enumerate(pieces):
            check_cancel(cancel)
            started = time.perf_counter()
            samples = recording.slice(chunk.start, chunk.end)
            request = build_request(
                loaded,
                samples,
                request_id=i,
                max_new_tokens=token_budget(len(samples) / SAMPLE_RATE, cfg),
                context=cfg.context_text,
                noise=AcousticNoise(cfg.acoustic, chunk_seed(cfg.seed, chunk.index)),
                segment_seconds=cfg.encoder_segment_seconds,
            )
            encode_seconds[i] = time.perf_counter() - started
            yield dataclasses.replace(request, voiced=voiced_spans(chunk, request.speech_span))

    def _chunk_result(self, loaded: Any, chunk: Chunk, result: Any, encode_seconds: float) -> ChunkResult:
        text = loaded.processor.tokenizer.decode(list(result.token_ids), skip_special_tokens=True)
        prefill = result.stats.prefill_seconds + encode_seconds  # audio encoding counts as prefill
        lost = result.stats.speech_lost_fraction  # share of the chunk's speech tokens
        lost_seconds = None if lost is None else lost * chunk.duration
        stats = dataclasses.replace(result.stats, prefill_seconds=prefill, speech_lost_seconds=lost_seconds)
        return ChunkResult(
            chunk=chunk,
            segments=parse_reply(text, chunk.duration),
            finish_reason=result.finish_reason,
            stats=stats,
            raw_text=text,
        )

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            try:
                from engine.backends.vibevoice.anchor import speech_anchor, speech_token_rate
                from engine.backends.vibevoice.boundary import segment_boundary
                from engine.backends.vibevoice.decoders import create_decoder
                from engine.backends.vibevoice.loading import load_model
            except ModuleNotFoundError as exc:  # the desktop app's default bundle has no torch
                raise ModelLoadError(_LEFT_OUT.format(exc.name)) from exc

            loaded = load_model(self.config)
            tokenizer = loaded.processor.tokenizer
            self._decoder = create_decoder(
                self.config.engine,
                loaded.model,
                max_batch=self.config.batch_size,
                eos_token_ids=loaded.tokens.eos_ids,
                segment_boundary=segment_boundary(tokenizer),
                options=self.config.decoder_options,
                speech_anchor=speech_anchor(tokenizer, speech_token_rate(loaded.model.config)),
            )
            self._loaded = loaded
        return self._loaded, self._decoder


_LEFT_OUT = (
    "the VibeVoice backend needs {}, which this installation leaves out; "
    "use the whisper backend, or install Murmur with torch (the full variant)"
)


def _installed(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def chunk_seed(seed: int, chunk_index: int) -> int:
    """The noise seed of one chunk: fixed by the run's seed and the chunk's place in the recording."""
    return (seed * 1_000_003 + chunk_index) % (2**63)
