"""Attention sparsity during decode (the paper's §2.3, Figure 5): how much of the KV cache matters.

`profile_attention(model, inputs, steps)` prefills a VibeVoice-ASR model on one chunk, decodes
`steps` tokens greedily with eager attention and `output_attentions=True`, and measures, per layer
and decode step, on the attention of the new token (averaged over heads, since a layer's KV cache
is shared by its heads and eviction decides per layer):

- `speech_needed`: the smallest fraction of speech tokens whose weights sum to `mass` (99 %) of
  the attention that falls on speech tokens;
- the Figure 5 split of *all* KV entries into four groups, by whether a token is in the smallest
  set holding `mass` of the total attention: kept speech, evictable speech, kept text, evictable
  text ("text" is every non-speech entry: prompt text and generated tokens).

Results are means over decode steps (`SparsityProfile.layers`); the per-step speech fractions
are kept too. `combine` averages several chunks' profiles. Run from the shell with
`python -m engine.evaluation.sparsity MODEL AUDIO --start 0 --seconds 300 --steps 2500 --out DIR`
(MODEL: a checkpoint folder or hub id, loaded and prompted exactly as the VibeVoice backend does);
it writes a Markdown table, JSON and a bar plot.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.evaluation.sparsity_profile import CATEGORIES, LayerSparsity, SparsityProfile

__all__ = ["CATEGORIES", "LayerSparsity", "SparsityProfile", "combine", "profile_attention"]


def needed_fraction(weights: np.ndarray, mass: float) -> float:
    """Smallest fraction of entries whose largest weights sum to `mass` of the total."""  # (n,)
    if weights.size == 0:
        return 0.0
    total = float(weights.sum())
    if total <= 0:
        return 0.0
    ordered = np.sort(weights)[::-1].cumsum()
    count = int(np.searchsorted(ordered, mass * total - 1e-12 * total)) + 1
    return min(count, weights.size) / weights.size


def kept_mask(weights: np.ndarray, mass: float) -> np.ndarray:
    """True for the entries of the smallest set holding `mass` of the total weight."""  # (n,) -> (n,)
    order = np.argsort(weights)[::-1]
    count = round(needed_fraction(weights, mass) * weights.size)
    mask = np.zeros(weights.size, dtype=bool)
    mask[order[:count]] = True
    return mask


def step_stats(weights: np.ndarray, speech: np.ndarray, mass: float) -> tuple[float, np.ndarray]:
    """(speech_needed, four category fractions) of one layer at one step; `speech` masks entries."""
    kept = kept_mask(weights, mass)
    n = weights.size
    split = np.array(
        [(kept & speech).sum(), (~kept & speech).sum(), (kept & ~speech).sum(), (~kept & ~speech).sum()]
    )
    return needed_fraction(weights[speech], mass), split / n


def profile_attention(
    model: Any,
    inputs: Mapping[str, Any],
    steps: int,
    mass: float = 0.99,
) -> SparsityProfile:
    """Profile one chunk (batch of one): `inputs` holds input_ids, input_values, padding_mask."""
    import torch

    if not 0 < mass <= 1:
        raise ValueError(f"attention mass must be in (0, 1], got {mass}")
    if steps < 1:
        raise ValueError("profile at least one decode step")
    input_ids = inputs["input_ids"]
    if input_ids.shape[0] != 1:
        raise ValueError("profile one chunk at a time (batch size 1)")
    speech_ids = (input_ids[0] == model.config.audio_token_id).cpu().numpy()  # (P,)
    model.set_attn_implementation("eager")
    needed = np.zeros((model.config.text_config.num_hidden_layers, steps))
    split = np.zeros((*needed.shape, len(CATEGORIES)))
    with torch.no_grad():
        out = model(**inputs, use_cache=True, sample=False, logits_to_keep=1)
        for j in range(steps):
            token = out.logits[:, -1].argmax(-1, keepdim=True)  # (1, 1)
            out = model(input_ids=token, cache=out.cache, use_cache=True, output_attentions=True)
            speech = np.concatenate([speech_ids, np.zeros(j + 1, dtype=bool)])
            for layer, attention in enumerate(out.attentions):  # (1, H, 1, L)
                weights = attention[0, :, -1, :].float().mean(0).cpu().numpy()
                needed[layer, j], split[layer, j] = step_stats(weights, speech, mass)
    return _profile(mass, steps, len(speech_ids), int(speech_ids.sum()), needed, split)


def combine(profiles: Sequence[SparsityProfile]) -> SparsityProfile:
    """The mean of several chunks' profiles (each chunk weighs the same)."""
    if not profiles:
        raise ValueError("nothing to combine")
    first = profiles[0]
    means = np.mean([[_row(layer) for layer in p.layers] for p in profiles], axis=0)  # (layers, 5)
    layers = tuple(LayerSparsity(i, *map(float, row)) for i, row in enumerate(means))
    per_step = np.concatenate([p.speech_needed_per_step for p in profiles], axis=1)
    return SparsityProfile(
        first.mass,
        sum(p.steps for p in profiles),
        round(np.mean([p.prompt_tokens for p in profiles])),
        round(np.mean([p.speech_tokens for p in profiles])),
        layers,
        per_step,
    )


def _profile(
    mass: float, steps: int, prompt: int, speech: int, needed: np.ndarray, split: np.ndarray
) -> SparsityProfile:
    layers = tuple(
        LayerSparsity(i, float(needed[i].mean()), *map(float, split[i].mean(0))) for i in range(len(needed))
    )
    return SparsityProfile(mass, steps, prompt, speech, layers, needed)


def _row(layer: LayerSparsity) -> list[float]:
    return [
        layer.speech_needed,
        layer.kept_speech,
        layer.evictable_speech,
        layer.kept_text,
        layer.evictable_text,
    ]


def sparsity_table(profile: SparsityProfile) -> str:
    """A Markdown table: one row per layer, percentages."""
    head = ["layer", f"speech tokens for {100 * profile.mass:g} % (%)", *(f"{c} (%)" for c in CATEGORIES)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for layer in profile.layers:
        cells = [str(layer.layer), *(f"{100 * v:.1f}" for v in _row(layer))]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(
        f"\n{profile.steps} decode steps; {profile.speech_tokens} speech tokens in a "
        f"{profile.prompt_tokens}-token prompt."
    )
    return "\n".join(lines) + "\n"


def _load(model_dir: Path, device: str) -> Any:
    """The checkpoint, loaded the way the VibeVoice backend loads it, with eager attention."""
    from engine.backends.vibevoice.config import VibeVoiceConfig
    from engine.backends.vibevoice.loading import load_model

    return load_model(VibeVoiceConfig(model=str(model_dir), device=device, attention="eager"))


def _inputs_for(loaded: Any, audio: Path, start: float, seconds: float) -> Mapping[str, Any]:
    """The prompt and audio of one chunk, built as the VibeVoice backend builds them."""
    import torch

    from engine.audio.io import load_audio
    from engine.backends.vibevoice.inputs import tokenize_chunk

    samples = load_audio(audio, 24000).slice(start, start + seconds)
    input_ids, input_values = tokenize_chunk(loaded.processor, loaded.tokens, samples)
    device = loaded.device
    return {
        "input_ids": input_ids[None].to(device),
        "input_values": input_values.to(device, loaded.dtype),
        "padding_mask": torch.ones(
            input_values.shape[0], input_values.shape[-1], dtype=torch.bool, device=device
        ),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.evaluation.sparsity", description=__doc__)
    parser.add_argument("model", type=Path, help="VibeVoice-ASR checkpoint folder (with its processor)")
    parser.add_argument("audio", type=Path, help="audio file")
    parser.add_argument("--start", type=float, default=0.0, help="chunk start, seconds (default 0)")
    parser.add_argument("--seconds", type=float, default=300.0, help="chunk length (default 300)")
    parser.add_argument("--steps", type=int, default=256, help="decode steps (default 256)")
    parser.add_argument("--mass", type=float, default=0.99, help="attention mass kept (default 0.99)")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")
    parser.add_argument("--out", type=Path, default=Path("sparsity"), help="output folder")
    args = parser.parse_args(argv)
    from engine.evaluation.plots import plot_sparsity

    loaded = _load(args.model, args.device)
    inputs = _inputs_for(loaded, args.audio, args.start, args.seconds)
    profile = profile_attention(loaded.model, inputs, args.steps, args.mass)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sparsity.md").write_text(sparsity_table(profile), encoding="utf-8")
    (args.out / "sparsity.json").write_text(json.dumps(profile.to_dict(), indent=1) + "\n", encoding="utf-8")
    plot_sparsity(profile, args.out / "sparsity.png")
    print(sparsity_table(profile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
