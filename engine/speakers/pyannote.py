"""pyannote.audio speaker diarization, for users who have a pipeline's weights (or hub access).

Contract:
- `PyannoteDiarizer(config)` loads `config.pipeline` on first use with
  `pyannote.audio.Pipeline.from_pretrained`: a local folder holding `config.yaml`, a `config.yaml`
  file, or a hub id (default `pyannote/speaker-diarization-community-1`) fetched with the user's token
  (`config.token`, else the `HF_TOKEN` / `HUGGING_FACE_HUB_TOKEN` environment variable). A pipeline
  object built by the caller can be passed instead (`pipeline=`), e.g. one assembled from local
  models. Every loading failure raises `ModelLoadError` with what to do about it.
- Safety: pyannote's usage telemetry is switched off (`PYANNOTE_METRICS_ENABLED=0`) unless the
  user set that variable; a pipeline folder can run code (its checkpoints are pickles), so only
  folders the user trusts should be given.
- The recording is given in memory, never as a path: `{"waveform": (1, T) float32 tensor,
  "sample_rate": 16000}` (resampled when the recording has another rate; pyannote holds the whole
  waveform, ≈ 230 MB per hour at 16 kHz).
- `SpeakerCount` maps onto `num_speakers` / `min_speakers` / `max_speakers`.
- Progress comes from pyannote's hook (its four steps, with per-batch progress inside steps), and
  the same hook raises `Cancelled` when `cancel` is set, so a long run stops within one batch.
- Turns come from `speaker_diarization` (overlapping speech kept; `exclusive=True` takes pyannote's
  overlap-free `exclusive_speaker_diarization` instead). The VAD segments are not needed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.audio.resample import resample
from engine.backends.base import check_cancel
from engine.errors import ModelLoadError
from engine.speakers.diarization import Diarization, ProgressFn, SpeakerCount, SpeakerTurn
from engine.types import Recording, SpeechSegment

DEFAULT_PIPELINE = "pyannote/speaker-diarization-community-1"
RATE = 16000
STEPS = ("segmentation", "speaker_counting", "embeddings", "discrete_diarization")
TOKEN_VARIABLES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
METRICS_VARIABLE = "PYANNOTE_METRICS_ENABLED"  # pyannote's usage telemetry: "1" opts in


@dataclass(frozen=True, slots=True)
class PyannoteConfig:
    pipeline: str = DEFAULT_PIPELINE  # local folder / config.yaml, or a hub id
    token: str | None = None  # hub token; None: from the environment
    device: str = "auto"  # "auto", "cpu" or "cuda"
    exclusive: bool = False  # True: pyannote's overlap-free turns

    def __post_init__(self) -> None:
        if not self.pipeline.strip():
            raise ValueError("name a pyannote pipeline: a local folder or a hub id")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda, got {self.device!r}")


class PyannoteDiarizer:
    """A pyannote.audio speaker-diarization pipeline run on the in-memory waveform."""

    name = "pyannote"

    def __init__(self, config: PyannoteConfig | None = None, pipeline: Any = None) -> None:
        self.config = config or PyannoteConfig()
        self._pipeline = pipeline

    def load(self) -> None:
        self._load()

    def diarize(
        self,
        recording: Recording,
        speech: Sequence[SpeechSegment],
        count: SpeakerCount | None = None,
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> Diarization:
        import torch

        check_cancel(cancel)
        pipeline = self._load()
        samples = recording.samples
        if recording.sample_rate != RATE:
            samples = resample(samples, recording.sample_rate, RATE)
        audio = {"waveform": torch.from_numpy(samples)[None], "sample_rate": RATE}
        output = pipeline(audio, hook=_hook(on_progress, cancel), **_count_options(count))
        check_cancel(cancel)
        return to_diarization(output, self.config.exclusive, recording.duration)

    def _load(self) -> Any:
        if self._pipeline is None:
            self._pipeline = load_pipeline(self.config)
        return self._pipeline


def load_pipeline(config: PyannoteConfig) -> Any:
    """`Pipeline.from_pretrained` with errors a user can act on."""
    source = config.pipeline
    local = Path(source).expanduser()
    token = config.token or next((os.environ[v] for v in TOKEN_VARIABLES if os.environ.get(v)), None)
    if not local.exists() and (source.startswith((".", "/", "~")) or source.endswith(".yaml")):
        raise ModelLoadError(f"the pyannote pipeline '{source}' does not exist")
    telemetry_off_unless_chosen()
    try:
        from pyannote.audio import Pipeline

        pipeline = Pipeline.from_pretrained(str(local) if local.exists() else source, token=token)
    except Exception as exc:  # pyannote raises many kinds (hub, yaml, checkpoint, gated repo)
        raise ModelLoadError(_hint(source, local.exists(), token, exc)) from exc
    if pipeline is None:
        raise ModelLoadError(_hint(source, local.exists(), token, None))
    return _to_device(pipeline, config.device)


def telemetry_off_unless_chosen() -> None:
    """pyannote.audio reports usage to its makers unless told not to: say no, unless the user set
    `PYANNOTE_METRICS_ENABLED` themselves. Call before pyannote.audio is first imported."""
    os.environ.setdefault(METRICS_VARIABLE, "0")


def _hint(source: str, local: bool, token: str | None, exc: Exception | None) -> str:
    detail = f": {exc}" if exc else ""
    if local:
        return f"could not load the pyannote pipeline in '{source}'{detail}"
    if token is None:
        return (
            f"the pyannote pipeline '{source}' must be downloaded from the Hugging Face hub, which "
            "needs an access token: accept its terms on the hub, then pass --hf-token or set HF_TOKEN "
            f"(or give a local pipeline folder){detail}"
        )
    return (
        f"could not download the pyannote pipeline '{source}' (offline, a wrong token, or its terms "
        f"not accepted on the hub); a local pipeline folder works offline{detail}"
    )


def _to_device(pipeline: Any, device: str) -> Any:
    import torch

    if device == "cuda" or (device == "auto" and torch.cuda.is_available()):
        pipeline.to(torch.device("cuda"))
    return pipeline


def _count_options(count: SpeakerCount | None) -> dict[str, int]:
    if count is None:
        return {}
    options = {"num_speakers": count.exact, "min_speakers": count.minimum, "max_speakers": count.maximum}
    return {k: v for k, v in options.items() if v is not None}


def _hook(on_progress: ProgressFn | None, cancel: threading.Event | None) -> Any:
    def hook(step: str, artifact: Any, file: Any = None, total: int | None = None,
             completed: int | None = None) -> None:  # fmt: skip
        check_cancel(cancel)
        if on_progress is not None and step in STEPS:
            within = completed / total if total and completed is not None else 1.0
            on_progress(STEPS.index(step) + within, len(STEPS))

    return hook


def to_diarization(output: Any, exclusive: bool, duration: float) -> Diarization:
    """Turns of a pyannote result (a `DiarizeOutput` or a plain `Annotation`)."""
    name = "exclusive_speaker_diarization" if exclusive else "speaker_diarization"
    annotation = getattr(output, name, output)
    turns = [
        SpeakerTurn(max(0.0, seg.start), min(seg.end, duration), str(label))
        for seg, _, label in annotation.itertracks(yield_label=True)
        if min(seg.end, duration) > max(0.0, seg.start)
    ]
    return Diarization(tuple(sorted(turns)))
