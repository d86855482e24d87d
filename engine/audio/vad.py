"""Voice-activity detection: a recording in, ordered speech segments (absolute seconds) out.

`SpeechDetector` is the interface; two implementations:
- `SileroVad` (default): silero-vad's batched ONNX model shipped inside its wheel (no hub).
  It runs at 16 kHz on blocks of the recording, so memory stays bounded for multi-hour files,
  reports progress per block and checks `cancel` between blocks. Neither the model file
  (`silero_model()`) nor the segmentation (`engine.audio.vad_timestamps`) imports silero's
  package, whose `__init__` imports torch: the default path runs without torch.
- `PyannoteVad`: wraps a pyannote.audio voice-activity-detection pipeline *object* that the user
  built or loaded; it is given the waveform in memory (never a file path).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from engine.audio.resample import StreamingResampler, resample
from engine.audio.speech_runs import speech_runs
from engine.errors import ModelLoadError, check_cancel
from engine.types import Recording, SpeechSegment

VAD_RATE = 16000
FRAME = 512  # silero frame at 16 kHz (32 ms)
CONTEXT = 64  # samples of the previous frame silero prepends to each frame
BLOCK_FRAMES = 1875  # 60 s at 16 kHz per block: the same probabilities as longer blocks (the state
# carries over), and onnxruntime keeps the peak of one block allocated (600 s blocks: +0.3 GB resident)
SILERO_MODEL = "silero_vad_16k_sequence.onnx"
MAX_THREADS = 4  # the model's per-frame layers run in parallel; the result does not depend on it

ProgressFn = Callable[[float, float], None]  # (seconds done, seconds total)


class SpeechDetector(Protocol):
    def detect(
        self,
        recording: Recording,
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> list[SpeechSegment]: ...


@dataclass(frozen=True, slots=True)
class VadConfig:
    threshold: float = 0.5
    min_speech_ms: int = 250
    min_silence_ms: int = 500
    speech_pad_ms: int = 30
    pause_ms: int = 160  # the shortest silence inside speech that may cut a short model window
    # ONNX threads; 0: the CPUs this process may use, at most MAX_THREADS. One, as faster-whisper's
    # own VAD: a second thread costs twice the CPU for little speed, and much more on a busy machine
    threads: int = 1

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold < 1.0:
            raise ValueError(f"VAD threshold must be in (0, 1), got {self.threshold}")
        if min(self.min_speech_ms, self.min_silence_ms, self.speech_pad_ms, self.pause_ms) < 0:
            raise ValueError("VAD durations must be non-negative")
        if self.threads < 0:
            raise ValueError(f"VAD threads must be 0 (automatic) or more, got {self.threads}")


@runtime_checkable
class PauseDetector(Protocol):
    """A `SpeechDetector` that also reports short pauses inside speech (see `SileroVad`)."""

    def detect_with_pauses(
        self,
        recording: Recording,
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> tuple[list[SpeechSegment], list[float]]: ...


class SileroVad:
    """silero-vad (sequence ONNX model from the silero-vad wheel)."""

    def __init__(self, config: VadConfig | None = None) -> None:
        self.config = config or VadConfig()
        self._session: Any = None

    def detect(
        self,
        recording: Recording,
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> list[SpeechSegment]:
        probs = self.speech_probabilities(recording, on_progress, cancel)
        return self.segments_from_probabilities(probs, recording.duration)

    def detect_with_pauses(
        self,
        recording: Recording,
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> tuple[list[SpeechSegment], list[float]]:
        """Speech segments as `detect` draws them, and the middle of every pause of at least
        `pause_ms` between the shorter speech runs the same probabilities give (seconds)."""
        probs = self.speech_probabilities(recording, on_progress, cancel)
        cfg = self.config
        runs = speech_runs(
            probs.tolist(),
            round(recording.duration * VAD_RATE),
            threshold=cfg.threshold,
            min_speech_ms=cfg.min_speech_ms,
            min_silence_ms=cfg.pause_ms,
            pad_ms=0,
        )
        pauses = [(a[1] + b[0]) / 2 / VAD_RATE for a, b in pairwise(runs)]
        return self.segments_from_probabilities(probs, recording.duration), pauses

    def speech_probabilities(
        self,
        recording: Recording,
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> np.ndarray:
        """Per-frame (32 ms) speech probability over the whole recording, float32 (F,)."""
        session = self._load()
        h = np.zeros((1, 1, 128), np.float32)
        c = np.zeros((1, 1, 128), np.float32)
        context = np.zeros(CONTEXT, np.float32)
        out: list[np.ndarray] = []
        for done, block in _blocks_16k(recording):
            check_cancel(cancel)
            frames = _frames(block, context)  # (n, CONTEXT + FRAME)
            context = frames[-1, -CONTEXT:].copy()
            probs, h, c = session.run(["speech_probs", "hn", "cn"], {"input": frames, "h": h, "c": c})
            out.append(np.asarray(probs, np.float32).reshape(-1))
            if on_progress is not None:
                on_progress(done, recording.duration)
        return np.concatenate(out) if out else np.zeros(0, np.float32)

    def segments_from_probabilities(self, probs: np.ndarray, duration: float) -> list[SpeechSegment]:
        cfg = self.config
        spans = speech_runs(
            probs.tolist(),
            round(duration * VAD_RATE),
            threshold=cfg.threshold,
            min_speech_ms=cfg.min_speech_ms,
            min_silence_ms=cfg.min_silence_ms,
            pad_ms=cfg.speech_pad_ms,
        )
        return [SpeechSegment(a / VAD_RATE, min(b / VAD_RATE, duration)) for a, b in spans if b > a]

    def _load(self) -> Any:
        if self._session is None:
            try:
                import onnxruntime as ort

                path = silero_model()
                options = ort.SessionOptions()
                options.inter_op_num_threads = 1
                options.intra_op_num_threads = self.config.threads or _usable_cpus(MAX_THREADS)
                self._session = ort.InferenceSession(
                    str(path), sess_options=options, providers=["CPUExecutionProvider"]
                )
            except Exception as exc:  # missing wheel data or a broken onnxruntime
                raise ModelLoadError(f"could not load the silero VAD model: {exc}") from exc
        return self._session


def _usable_cpus(most: int) -> int:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(most, cpus))


def silero_model() -> Path:
    """silero-vad's sequence ONNX model inside the installed wheel, found without importing the
    package (its `__init__` imports torch); in a frozen bundle, under the bundle folder."""
    spec = importlib.util.find_spec("silero_vad")
    folders = [Path(f) for f in (spec.submodule_search_locations or [])] if spec else []
    frozen = getattr(sys, "_MEIPASS", None)
    folders += [Path(frozen) / "silero_vad"] if frozen else []
    for folder in folders:
        path = folder / "data" / SILERO_MODEL
        if path.is_file():
            return path
    raise ModelLoadError(f"the silero VAD model {SILERO_MODEL} is missing: install the package 'silero-vad'")


class PyannoteVad:
    """A pyannote.audio VAD pipeline object, run on the in-memory waveform."""

    def __init__(self, pipeline: Any) -> None:
        self.pipeline = pipeline

    def detect(
        self,
        recording: Recording,
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> list[SpeechSegment]:
        import torch

        check_cancel(cancel)
        waveform = _to_16k(recording)
        result = self.pipeline({"waveform": torch.from_numpy(waveform)[None], "sample_rate": VAD_RATE})
        annotation = getattr(result, "speech_regions", None) or getattr(result, "annotation", result)
        segments = [
            SpeechSegment(max(0.0, s.start), min(s.end, recording.duration))
            for s in annotation.get_timeline().support()
        ]
        if on_progress is not None:
            on_progress(recording.duration, recording.duration)
        return [s for s in segments if s.end > s.start]


def _frames(block: np.ndarray, context: np.ndarray) -> np.ndarray:
    """Cut a 16 kHz block into silero frames, each prefixed by the previous frame's tail."""
    n = -(-len(block) // FRAME)
    frames = np.zeros((n, FRAME), np.float32)
    frames.reshape(-1)[: len(block)] = block
    contexts = np.empty((n, CONTEXT), np.float32)
    contexts[0] = context
    contexts[1:] = frames[:-1, -CONTEXT:]
    return np.concatenate((contexts, frames), axis=1)  # (n, CONTEXT + FRAME)


def _blocks_16k(recording: Recording) -> Iterator[tuple[float, np.ndarray]]:
    """Yield (seconds done, 16 kHz block): whole blocks of BLOCK_FRAMES frames, then the rest."""
    block = BLOCK_FRAMES * FRAME
    if recording.sample_rate == VAD_RATE:
        for a in range(0, len(recording.samples), block):
            chunk = recording.samples[a : a + block]
            yield (a + len(chunk)) / VAD_RATE, chunk
        return
    stream = StreamingResampler(recording.sample_rate, VAD_RATE)
    step = round(block * recording.sample_rate / VAD_RATE)
    pending = np.zeros(0, np.float32)
    for a in range(0, len(recording.samples), step):
        pending = np.concatenate((pending, stream.push(recording.samples[a : a + step])))
        whole = len(pending) // block * block
        if whole:
            yield min(a + step, len(recording.samples)) / recording.sample_rate, pending[:whole]
            pending = pending[whole:]
    rest = np.concatenate((pending, stream.flush()))
    if len(rest):
        yield recording.duration, rest


def _to_16k(recording: Recording) -> np.ndarray:
    if recording.sample_rate == VAD_RATE:
        return recording.samples
    return resample(recording.samples, recording.sample_rate, VAD_RATE)


DETECTORS: dict[str, Callable[[VadConfig], SpeechDetector]] = {"silero": SileroVad}
