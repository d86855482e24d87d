"""KV capacity planning: what an eviction policy keeps and costs, computed without running a model.

`plan_policy` evaluates a policy's `RowLayout` over every decode step of one chunk — the same
arithmetic the engine's rows follow — and returns what the engine would report:

- kept % at the last step (held / logical KV entries summed over layers: the paper's "kept %", the
  authors' `compression_stats`) and its mean over steps (`GenerationStats.kv_kept_last` / `_fraction`);
- the most entries a row holds at once (all layers), KV bytes per row and per batch at that peak
  (the store reserves the largest layer group's slots in every layer, plus the speech copy that
  `speech-follow` needs);
- the bytes attention reads per step for the batch, averaged over steps.

A run of G output tokens has G − 1 decode steps (the last token is never fed back), as in the engine
and in HF `generate`. `speech-anchor` depends on the timestamps the model writes; the planner
assumes the transcript advances evenly through the audio (anchor = S·j/G at step j). The module
imports neither torch nor transformers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.decode.eviction import EvictionConfig, make_policy
from engine.decode.layout import RowLayout


@dataclass(frozen=True, slots=True)
class ModelShape:
    """What the KV cache size depends on."""

    layers: int
    kv_heads: int
    head_dim: int
    dtype_bytes: int = 2  # bfloat16
    speech_rate: float = 7.5  # speech tokens per second of audio

    def __post_init__(self) -> None:
        if min(self.layers, self.kv_heads, self.head_dim, self.dtype_bytes) < 1 or not self.speech_rate > 0:
            raise ValueError("a model shape needs positive layers, heads, head size, bytes and speech rate")

    @property
    def entry_bytes(self) -> int:
        """Bytes of one KV entry (key and value) in one layer."""
        return 2 * self.kv_heads * self.head_dim * self.dtype_bytes


SHAPES: dict[str, ModelShape] = {
    "qwen2.5-7b": ModelShape(layers=28, kv_heads=4, head_dim=128),  # VibeVoice-ASR's language model
}


def shape_from_config(path: Path, sample_rate: int = 24000) -> ModelShape:
    """The shape of a checkpoint folder's `config.json` (VibeVoice-ASR or a plain causal LM).

    The speech-token rate is the sample rate over the acoustic tokenizer's hop length.
    """
    file = path / "config.json" if path.is_dir() else path
    try:
        config = json.loads(file.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read a model config at {file}: {exc}") from exc
    text = config.get("text_config", config)
    heads = int(text["num_attention_heads"])
    head_dim = int(text.get("head_dim") or text["hidden_size"] // heads)
    acoustic = config.get("acoustic_tokenizer_encoder_config") or {}
    hop = acoustic.get("hop_length") or math.prod(acoustic.get("downsampling_ratios") or [3200])
    dtype = str(text.get("dtype") or config.get("torch_dtype") or "bfloat16")
    return ModelShape(
        layers=int(text["num_hidden_layers"]),
        kv_heads=int(text.get("num_key_value_heads") or heads),
        head_dim=head_dim,
        dtype_bytes=4 if "32" in dtype else 2,
        speech_rate=sample_rate / hop,
    )


@dataclass(frozen=True, slots=True)
class PolicyPlan:
    name: str
    kept_last: float  # held / logical KV at the last step
    kept_mean: float  # mean over steps
    peak_entries: int  # most KV entries one row holds at once, all layers
    row_bytes: int  # KV bytes reserved per row at the peak
    batch_bytes: int
    attention_bytes: float  # KV bytes attention reads per step, whole batch, mean over steps


def chunk_layout(
    config: EvictionConfig,
    shape: ModelShape,
    chunk_seconds: float,
    output_tokens: int,
    system_tokens: int = 100,
) -> RowLayout:
    """The layout of a chunk: `system_tokens` around ⌈seconds × rate⌉ speech tokens (half before)."""
    speech = math.ceil(chunk_seconds * shape.speech_rate)
    head = system_tokens // 2
    return make_policy(config).layout(
        speech + system_tokens, (head, head + speech), output_tokens, shape.layers
    )


def plan_policy(name: str, layout: RowLayout, shape: ModelShape, batch: int) -> PolicyPlan:
    """What `layout` keeps and costs for a run of `layout.max_new_tokens` output tokens."""
    steps = np.arange(max(layout.max_new_tokens - 1, 1))  # decode steps j = 0 .. G-2
    anchor = (layout.speech_len * steps) // max(layout.max_new_tokens, 1)
    kept = layout.kept_fraction(steps, anchor)
    held = sum(
        layout.layer_group.count(g) * layout.counts(g, steps, anchor).astype(np.float64)
        for g in range(layout.groups)
    )
    row_bytes = layout.capacity * shape.layers * shape.entry_bytes
    if layout.follows:
        row_bytes += layout.speech_len * shape.layers * shape.entry_bytes
    per_layer_entry = shape.entry_bytes
    return PolicyPlan(
        name=name,
        kept_last=float(kept[-1]),
        kept_mean=float(kept.mean()),
        peak_entries=int(held.max()),
        row_bytes=row_bytes,
        batch_bytes=row_bytes * batch,
        attention_bytes=float(held.mean()) * per_layer_entry * batch,
    )
