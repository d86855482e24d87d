"""Load a VibeVoice-ASR checkpoint (HF format) through transformers' native classes.

`load_model(config)` returns a `LoadedModel`: `VibeVoiceAsrForConditionalGeneration` in eval mode
on the chosen device and dtype, its `VibeVoiceAsrProcessor`, and the prompt's special tokens. The
source is a local folder or a hub id (default `microsoft/VibeVoice-ASR-HF`); offline (the config
field, else HF_HUB_OFFLINE) only local files and the Hugging Face cache are read. Device "auto"
is CUDA when present; dtype "auto" is bfloat16 on CUDA and float32 on the CPU; `attention`
selects the language model's kernel (the audio encoders have no attention).

Every failure a user can cause — a missing folder, a checkpoint not downloaded, the original
(non-HF) VibeVoice format, a tokenizer without the prompt's tokens, no CUDA, no flash-attn —
raises `ModelLoadError` saying what to download or change.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from engine.backends.vibevoice.availability import checkpoint_source, download_hint, must_stay_offline
from engine.backends.vibevoice.config import SAMPLE_RATE, VibeVoiceConfig
from engine.backends.vibevoice.prompt import PromptTokens, read_prompt_tokens
from engine.errors import ModelLoadError

log = logging.getLogger(__name__)

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
HF_FORMAT = "vibevoice_asr"  # model_type of checkpoints the native classes load
ORIGINAL_FORMAT = "vibevoice"  # model_type of microsoft/VibeVoice-ASR (needs conversion)


@dataclass(frozen=True, slots=True, eq=False)
class LoadedModel:
    model: Any  # VibeVoiceAsrForConditionalGeneration, eval mode
    processor: Any  # VibeVoiceAsrProcessor
    tokens: PromptTokens
    device: torch.device
    dtype: torch.dtype
    source: str


def resolve_device(name: str) -> torch.device:
    """The torch device for a config's `device` ("auto": CUDA when present)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ModelLoadError("CUDA is not available on this machine; use --device cpu (slow) or auto")
    return torch.device(name)


def resolve_dtype(name: str, device: torch.device) -> torch.dtype:
    """The weights' dtype ("auto": bfloat16 on CUDA, float32 elsewhere)."""
    if name == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return _DTYPES[name]


def load_model(config: VibeVoiceConfig) -> LoadedModel:
    """Load the checkpoint `config.model` (see the module docstring)."""
    from transformers import VibeVoiceAsrForConditionalGeneration, VibeVoiceAsrProcessor

    source = checkpoint_source(config.model)
    offline = must_stay_offline(source, config)  # no hub retries when it cannot be reached
    device = resolve_device(config.device)
    dtype = resolve_dtype(config.dtype, device)
    _check_format(source, offline)
    if config.attention == "flash_attention_2" and importlib.util.find_spec("flash_attn") is None:
        raise ModelLoadError("--attention flash_attention_2 needs the flash-attn package; use sdpa instead")
    try:
        with _quiet_progress():
            processor = VibeVoiceAsrProcessor.from_pretrained(source, local_files_only=offline)
            model = VibeVoiceAsrForConditionalGeneration.from_pretrained(
                source,
                dtype=dtype,
                attn_implementation={"text_config": config.attention},
                local_files_only=offline,
                **_placement(device),
            )
    except (OSError, ValueError, ImportError) as exc:
        raise ModelLoadError(_load_hint(config.model, source, offline, exc)) from exc
    model = model.to(device).eval()
    tokens = read_prompt_tokens(processor, model.config, model.generation_config)
    rate = processor.feature_extractor.sampling_rate
    if rate != SAMPLE_RATE:
        raise ModelLoadError(f"the checkpoint expects {rate} Hz audio; VibeVoice-ASR uses {SAMPLE_RATE} Hz")
    log.info("loaded VibeVoice-ASR from %s on %s (%s, %s)", source, device, dtype, config.attention)
    return LoadedModel(model, processor, tokens, device, dtype, source)


def _check_format(source: str, offline: bool) -> None:
    from transformers import PretrainedConfig

    if Path(source).is_dir() and not (Path(source) / "config.json").is_file():
        raise ModelLoadError(
            f"'{source}' is not a VibeVoice-ASR checkpoint folder: it has no config.json "
            f"(download microsoft/VibeVoice-ASR-HF into it, see docs/vibevoice.md)"
        )
    try:
        raw, _ = PretrainedConfig.get_config_dict(source, local_files_only=offline)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(_load_hint(source, source, offline, exc)) from exc
    kind = raw.get("model_type")
    if kind == ORIGINAL_FORMAT:
        raise ModelLoadError(
            f"'{source}' is the original VibeVoice-ASR format; Murmur loads the transformers format: "
            f"use microsoft/VibeVoice-ASR-HF, or convert it with transformers' "
            f"convert_vibevoice_asr_to_hf.py"
        )
    if kind != HF_FORMAT:
        raise ModelLoadError(
            f"'{source}' is not a VibeVoice-ASR checkpoint (its config.json names model type {kind!r}, "
            f"not {HF_FORMAT!r})"
        )


def _placement(device: torch.device) -> dict[str, Any]:
    """Load straight onto the GPU when accelerate is there (halves peak host memory)."""
    if device.type == "cuda" and importlib.util.find_spec("accelerate") is not None:
        return {"device_map": str(device)}
    return {}


def _load_hint(model: str, source: str, offline: bool, exc: Exception) -> str:
    if Path(source).is_dir():
        return (
            f"'{source}' is not a complete VibeVoice-ASR checkpoint folder (it needs config.json, "
            f"the safetensors weights and the processor and tokenizer files): {exc}"
        )
    where = (
        "is not in the Hugging Face cache and the hub cannot be reached or may not be used (offline)"
        if offline
        else "could not be downloaded"
    )
    reason = "" if offline else f" (reason: {exc})"
    return f"the VibeVoice-ASR checkpoint '{model}' {where}. {download_hint(model)}{reason}"


@contextlib.contextmanager
def _quiet_progress() -> Iterator[None]:
    """No weight-loading progress bars while loading (the pipeline reports its own progress)."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()
