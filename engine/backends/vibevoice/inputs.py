"""One chunk of 24 kHz audio → a `DecodeRequest`: prompt embeddings with the audio merged in.

`build_request` runs the processor (RMS normalisation to -25 dBFS, padding to a multiple of the
3200-sample hop, one audio token per hop in the prompt), embeds the prompt, encodes the audio
and writes its features over the audio tokens. `encode_audio` is the model's own audio path
(acoustic + semantic causal encoders, then the projector) run in causal segments of
`segment_samples` with the encoders' streaming caches, so long inputs never meet the encoders
whole; the result equals one-shot encoding. The acoustic latent is, by `AcousticNoise.mode`:
"mean" (the encoder mean: deterministic, the default), "seeded" (the model's training noise,
drawn from a CPU generator seeded per request: deterministic on any device) or "sampled" (fresh
noise from torch's global generator, as transformers' own forward does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from engine.backends.vibevoice.config import SAMPLE_RATE
from engine.backends.vibevoice.loading import LoadedModel
from engine.backends.vibevoice.prompt import PromptTokens, build_prompt
from engine.decode.api import DecodeRequest


@dataclass(frozen=True, slots=True)
class AcousticNoise:
    mode: str = "mean"  # "mean", "seeded" or "sampled"
    seed: int = 0  # the generator seed of "seeded"

    def apply(self, latents: torch.Tensor, vae_std: float) -> torch.Tensor:  # (B, N, C) → (B, N, C)
        if self.mode == "mean":
            return latents
        if self.mode == "seeded":
            gen = torch.Generator(device="cpu").manual_seed(self.seed)
            scale = vae_std * torch.randn(latents.shape[0], generator=gen)
            noise = torch.randn(latents.shape, generator=gen) * scale[:, None, None]
        elif self.mode == "sampled":
            scale = vae_std * torch.randn(latents.shape[0])
            noise = torch.randn(latents.shape) * scale[:, None, None]
        else:
            raise ValueError(f"unknown acoustic mode {self.mode!r}")
        return latents + noise.to(latents.device, latents.dtype)


def segment_samples(seconds: float, hop: int) -> int:
    """Samples per encoder segment: `seconds` rounded down to whole hops (at least one)."""
    return max(hop, int(seconds * SAMPLE_RATE) // hop * hop)


@torch.no_grad()
def encode_latents(
    model: torch.nn.Module, values: torch.Tensor, segment: int
) -> tuple[torch.Tensor, torch.Tensor]:  # values (B, 1, T) → (B, N, C_a), (B, N, C_s)
    """The acoustic and semantic encoder means, encoded in causal segments of `segment` samples."""
    inner = model.model
    caches: dict[str, object] = {}
    latents: dict[str, list[torch.Tensor]] = {"acoustic": [], "semantic": []}
    for piece in torch.split(values, segment, dim=-1):
        for name in latents:
            encoder = getattr(inner, f"{name}_tokenizer_encoder")
            out = encoder(piece, padding_cache=caches.get(name), use_cache=True)
            latents[name].append(out.latents)
            caches[name] = out.padding_cache
    return torch.cat(latents["acoustic"], dim=1), torch.cat(latents["semantic"], dim=1)


def encode_audio(
    model: torch.nn.Module, values: torch.Tensor, segment: int, noise: AcousticNoise
) -> torch.Tensor:  # values (B, 1, T) → features (B, ceil(T / hop), d)
    """Audio features as the language model sees them (encoders, acoustic noise, projector)."""
    acoustic, semantic = encode_latents(model, values, segment)
    vae_std = float(model.config.acoustic_tokenizer_encoder_config.vae_std)
    with torch.no_grad():
        return model.model.multi_modal_projector(noise.apply(acoustic, vae_std), semantic)


@torch.no_grad()
def build_request(
    loaded: LoadedModel,
    samples: np.ndarray,
    *,
    request_id: int,
    max_new_tokens: int,
    context: str | None = None,
    noise: AcousticNoise | None = None,
    segment_seconds: float = 60.0,
) -> DecodeRequest:
    """The decode request for one chunk's samples (24 kHz mono float32, at least one sample)."""
    model, tokens = loaded.model, loaded.tokens
    input_ids, values = tokenize_chunk(loaded.processor, tokens, samples, context)
    input_ids = input_ids.to(loaded.device)  # (P,)
    values = values.to(loaded.device, loaded.dtype)  # (1, 1, T')
    hop = int(model.config.acoustic_tokenizer_encoder_config.hop_length)
    features = encode_audio(model, values, segment_samples(segment_seconds, hop), noise or AcousticNoise())
    embeds = model.get_input_embeddings()(input_ids).clone()  # (P, d)
    span = _audio_span(input_ids, tokens.audio_id, features.shape[1])
    embeds[span[0] : span[1]] = features[0, : span[1] - span[0]].to(embeds.dtype)
    return DecodeRequest(id=request_id, inputs_embeds=embeds, speech_span=span, max_new_tokens=max_new_tokens)


def tokenize_chunk(
    processor: Any, tokens: PromptTokens, samples: np.ndarray, context: str | None = None
) -> tuple[torch.Tensor, torch.Tensor]:  # → input_ids (P,), input_values (1, 1, T')
    """The prompt's token ids (audio placeholder expanded) and the normalised, padded audio."""
    if samples.ndim != 1 or len(samples) == 0:
        raise ValueError(f"a chunk needs mono samples, got shape {samples.shape}")
    prompt = build_prompt(len(samples) / SAMPLE_RATE, tokens, context)
    hop = processor.feature_extractor.pad_to_multiple_of
    audio = {"sampling_rate": SAMPLE_RATE, "pad_to_multiple_of": hop}
    # audio settings passed explicitly: a loaded tokenizer's pad_to_multiple_of=None would win otherwise
    batch = processor(text=[prompt], audio=[samples], audio_kwargs=audio)
    return batch["input_ids"][0], batch["input_values"]


def _audio_span(input_ids: torch.Tensor, audio_id: int, n_features: int) -> tuple[int, int]:
    positions = torch.nonzero(input_ids == audio_id).flatten().tolist()
    start, end = positions[0], positions[-1] + 1
    if end - start != len(positions) or len(positions) > n_features:
        raise RuntimeError(
            f"the prompt's audio tokens ({len(positions)}) do not form one span matching the "
            f"{n_features} audio features"
        )
    return start, end
