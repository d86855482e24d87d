"""KV capacity planning: what an eviction policy keeps and costs, computed without running a model.

`plan_policy` evaluates a policy's `RowLayout` over every decode step of one chunk — the same
arithmetic the engine's rows follow — and returns what the engine would report:

- kept % at the last step (held / logical KV entries summed over layers: the paper's "kept %", the
  authors' `compression_stats`) and its mean over steps (`GenerationStats.kv_kept_last` / `_fraction`);
- the most entries a row holds at once (all layers), KV bytes per row and per batch at that peak
  (the store reserves the largest layer group's slots in every layer, plus the speech copy that
  `speech-follow` needs);
- the bytes attention reads per step for the batch, averaged over steps;
- the share of the speech evicted before the transcript reached it (`lost_fraction`);
- on a given GPU (`GPUS`), the rows a KV memory budget admits at that row size (the engine's
  `admission.rows_within`) and the decode steps per second a memory-bound step would run at.

A run of G output tokens has G − 1 decode steps (the last token is never fed back), as in the engine
and in HF `generate`. `speech-anchor` depends on the timestamps the model writes; the planner
assumes the transcript advances evenly through the audio, the anchor four segments of `turn_tokens`
or 5 % of the speech behind it, the larger (`RowLayout.planned_anchor`). The module imports neither
torch nor transformers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from engine.decode.admission import device_budget, rows_within
from engine.decode.eviction import EvictionConfig, make_policy, speech_rule
from engine.decode.layout import RowLayout
from engine.errors import ModelLoadError


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
        if not isinstance(config, dict):
            raise ValueError("not a JSON object")
        text = config.get("text_config", config)
        heads = int(text["num_attention_heads"])
        head_dim = int(text.get("head_dim") or text["hidden_size"] // heads)
        acoustic = config.get("acoustic_tokenizer_encoder_config") or {}
        hop = acoustic.get("hop_length") or math.prod(acoustic.get("downsampling_ratios") or [3200])
        return ModelShape(
            layers=int(text["num_hidden_layers"]),
            kv_heads=int(text.get("num_key_value_heads") or heads),
            head_dim=head_dim,
            dtype_bytes=dtype_bytes(checkpoint_dtype(config)),
            speech_rate=sample_rate / hop,
        )
    except OSError as exc:
        raise ModelLoadError(f"cannot read a model config at {file}: {exc.strerror or exc}") from exc
    except (ValueError, KeyError, TypeError, AttributeError, ZeroDivisionError) as exc:
        reason = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ModelLoadError(f"{file} is not a usable model config ({reason})") from exc


def checkpoint_dtype(config: dict) -> str:
    """The weights' dtype a config names: transformers 5's `dtype` or the older `torch_dtype`, of the
    whole checkpoint first, then of its language model (bfloat16 when none is named)."""
    text = config.get("text_config") or {}
    for where in (config, text):
        for key in ("dtype", "torch_dtype"):
            if isinstance(where.get(key), str):
                return where[key].removeprefix("torch.")
    return "bfloat16"


def dtype_bytes(name: str) -> int:
    sizes = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4, "float64": 8}
    if name not in sizes:
        raise ValueError(f"unknown dtype {name!r}; known: {', '.join(sizes)}")
    return sizes[name]


@dataclass(frozen=True, slots=True)
class PolicyPlan:
    name: str
    kept_last: float  # held / logical KV at the last step
    kept_mean: float  # mean over steps
    peak_entries: int  # most KV entries one row holds at once, all layers
    row_bytes: int  # KV bytes reserved per row at the peak
    batch_bytes: int
    attention_bytes: float  # KV bytes attention reads per step, whole batch, mean over steps
    lost: float = 0.0  # share of the speech evicted before the transcript reached it

    @property
    def attention_row_bytes(self) -> float:
        return self.attention_bytes * self.row_bytes / self.batch_bytes if self.batch_bytes else 0.0


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
    anchor = layout.planned_anchor(steps)
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
        lost=lost_fraction(layout),
    )


def lost_fraction(layout: RowLayout) -> float:
    """Share of the speech some evicting layer group no longer holds at the step the transcript
    reaches it, for a transcript that moves evenly through the speech over the token budget (speech
    index i is written at step ⌊i·G/S⌋; `speech-anchor` under its planned anchor)."""
    length = layout.speech_len
    if not length:
        return 0.0
    i = np.arange(length)
    j = (i * layout.max_new_tokens) // length  # the step that writes speech index i
    lost = np.zeros(length, dtype=bool)
    for g, rule in enumerate(layout.rules):
        if rule.evicts:
            sinks, lo, hi = layout.speech(g, j, layout.planned_anchor(j))
            lost |= (i >= sinks) & ((i < lo) | (i >= hi))
    return float(lost.mean())


def expected_loss(config: EvictionConfig, chunk_seconds: float = 300.0, output_tokens: int = 2730) -> float:
    """`lost_fraction` of a policy on a VibeVoice-ASR chunk (default: 300 s at the paper's token budget)."""
    shape = SHAPES["qwen2.5-7b"]
    return lost_fraction(chunk_layout(config, shape, chunk_seconds, output_tokens))


# The paper's Table 4: (delay S, speech window W, kept % reported), speech sinks 32 and rate 8 (the
# authors' defaults; "S" read as the delay, the reading whose kept % matches the published code).
TABLE4 = ((256, 1024, 93.2), (512, 1024, 93.1), (256, 1538, 97.2), (512, 1538, 97.2))


def batch_minimum_kept(
    config: EvictionConfig,
    draws: int = 2000,
    seed: int = 0,
    output_tokens: int = 2869,
    system_tokens: int = 100,
    rate: float = 7.5,
) -> float:
    """Kept KV at the last step under the authors' batching, pooled over `draws` modelled meetings.

    The authors' benchmark decodes one meeting's chunks (at most 16) as one static batch, and their
    speech eviction caps every row's drop at the *batch's* shortest speech span − sinks − window;
    kept % is the batch's physical / logical entries (padded prompt, longest output) at its last
    step. A meeting here lasts 17–50 min, is cut into full chunks of 285–300 s and a shorter tail
    (which sets the cap), and every row writes `output_tokens`. A model of their runs, not a replay.
    """
    generator = np.random.default_rng(seed)
    rule = speech_rule(config, "front")
    held = logical = 0.0
    for _ in range(draws):
        left, spans = generator.uniform(17, 50) * 60, []
        while left > 0:
            chunk = min(generator.uniform(285, 300), left)
            spans.append(math.ceil(chunk * rate))
            left -= chunk
        # the longest row at the last decode step, its drop capped by the batch's shortest span
        sinks, lo, _ = replace(rule, span=min(spans)).bounds(output_tokens - 1, max(spans))
        dropped = int(lo) - sinks
        total = max(spans) + system_tokens + output_tokens
        held, logical = held + total - dropped, logical + total
    return held / logical


@dataclass(frozen=True, slots=True)
class Gpu:
    name: str
    memory: int  # bytes
    bandwidth: float  # bytes per second of HBM


GPUS = (Gpu("H200 141 GB", 141 * 10**9, 4.8e12), Gpu("H100 80 GB", 80 * 10**9, 3.35e12))
RESIDENT_BYTES = 22 * 10**9  # VibeVoice-ASR once loaded in bfloat16 (research: ≈ 22 GB)
STEP_WEIGHT_BYTES = 2 * 7_070_000_000  # Qwen2.5-7B's weights a decode step reads (no embedding table)


@dataclass(frozen=True, slots=True)
class Projection:
    rows: int  # rows the KV budget admits
    steps_per_second: float  # a memory-bound step: weights + the rows' KV read at full bandwidth

    @property
    def tokens_per_second(self) -> float:
        return self.rows * self.steps_per_second


def project(plan: PolicyPlan, gpu: Gpu, max_rows: int | None = None) -> Projection:
    """Rows admitted on `gpu` at `plan`'s row size, and the steps per second of a step that reads
    the decoder's weights and those rows' KV at the GPU's full bandwidth (an upper bound)."""
    rows = rows_within(device_budget(gpu.memory - RESIDENT_BYTES), plan.row_bytes)
    rows = rows if max_rows is None else min(rows, max_rows)
    read = STEP_WEIGHT_BYTES + rows * plan.attention_row_bytes
    return Projection(rows, gpu.bandwidth / read)
