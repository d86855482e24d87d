"""Teacher-forced training of a tiny VibeVoice-ASR model until it replies with its clips' references.

`fit_to_targets(model, processor, clips, clip_dir, recipe)` first writes the clips as 24 kHz FLAC
files (with their references as JSON) and reads them back the way the pipeline does, so training
sees exactly the samples `murmur transcribe` will. The prompt is the backend's own (same
processor, same template, audio mean latents); the target is the reply the real model writes:
`<|im_start|>assistant\\n{compact JSON}<|im_end|>\\n<|endoftext|>`. The audio encoders stay
frozen (their latents are computed once); the projector and the language model learn with AdamW,
seeded, one clip per forward pass (no padding), until every target token leads its runner-up by
`recipe.margin` logits. With `recipe.hidden`, each step also passes every clip under a mask that
hides the speech behind its transcript as `speech-anchor` would evict it (`tiny_masks`, a look-back
drawn per pass), and the margin holds on those passes too. The model is then checked by greedy
decoding through the backend's own request and decoder code, each reply given room for its whole
target (a 90 s clip's reply is about 770 tokens); it trains on with a doubled margin if any reply
differs. Returns a report: steps, seconds, final loss.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from engine.audio.io import load_audio
from engine.backends.vibevoice.anchor import speech_token_rate
from engine.backends.vibevoice.config import SAMPLE_RATE
from engine.backends.vibevoice.inputs import build_request, encode_latents, segment_samples, tokenize_chunk
from engine.backends.vibevoice.jsonscan import object_ends
from engine.backends.vibevoice.loading import LoadedModel
from engine.backends.vibevoice.prompt import IM_END, IM_START, read_prompt_tokens
from engine.backends.vibevoice.reference import GenerateDecoder
from engine.synth.references import write_flac
from engine.testing.tiny_clips import TinyClip
from engine.testing.tiny_masks import HiddenSpeech, anchors, closed_segments, hidden_speech_mask


@dataclass(frozen=True, slots=True, eq=False)
class _Example:
    input_ids: torch.Tensor  # (L,) prompt then target
    prompt_length: int
    acoustic: torch.Tensor  # (1, N, C_a) frozen encoder means
    semantic: torch.Tensor  # (1, N, C_s)
    samples: Any  # (T,) the audio as the pipeline decodes it
    target: str
    anchor_of: list[int]  # per reply token, the speech anchor once it is written (-1: none yet)


def fit_to_targets(
    model: Any, processor: Any, clips: list[TinyClip], clip_dir: Path, recipe: Any
) -> dict[str, Any]:
    """Train `model` in place until it reproduces every clip's reference (see the module docstring)."""
    torch.manual_seed(recipe.seed)
    recent = recipe.hidden.recent if recipe.hidden else 1
    examples = [_example(model, processor, clip, clip_dir, recent) for clip in clips]
    params = [p for n, p in model.named_parameters() if "tokenizer_encoder" not in n]
    optimizer = torch.optim.AdamW(params, lr=recipe.learning_rate)
    started, steps, loss, margin = time.perf_counter(), 0, float("nan"), recipe.margin
    model.train()
    while steps < recipe.max_steps:
        loss, lead = _step(model, optimizer, examples, recipe.hidden)
        steps += 1
        if lead < margin:
            continue
        model.eval()
        if _replies_match(model, processor, examples):
            break
        margin *= 2
        model.train()
    else:
        raise RuntimeError(f"the tiny model did not learn its targets in {recipe.max_steps} steps")
    model.eval()
    return {"steps": steps, "seconds": round(time.perf_counter() - started, 2), "loss": loss}


def _example(model: Any, processor: Any, clip: TinyClip, clip_dir: Path, recent: int) -> _Example:
    clip_dir.mkdir(parents=True, exist_ok=True)
    path = write_flac(clip_dir / f"{clip.name}.flac", clip.samples, SAMPLE_RATE)
    segments = [{"start": s.start, "end": s.end, "speaker": s.speaker, "text": s.text} for s in clip.segments]
    meta = {"target": clip.target, "segments": segments}
    (clip_dir / f"{clip.name}.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    samples = load_audio(path, SAMPLE_RATE).samples
    tokens = read_prompt_tokens(processor, model.config, model.generation_config)
    prompt_ids, values = tokenize_chunk(processor, tokens, samples)
    reply = f"{IM_START}assistant\n{clip.target}{IM_END}\n{processor.tokenizer.eos_token}"
    encoded = processor.tokenizer(reply, add_special_tokens=False, return_offsets_mapping=True)
    target_ids = torch.tensor(encoded["input_ids"])
    at = reply.index(clip.target)
    ends = [at + end - 1 for end in object_ends(clip.target)]  # each object's closing `}` in the reply
    closed = closed_segments([end for _, end in encoded["offset_mapping"]], ends)
    starts = [s.start for s in clip.segments]
    hop = int(model.config.acoustic_tokenizer_encoder_config.hop_length)
    acoustic, semantic = encode_latents(model, values, segment_samples(60.0, hop))
    return _Example(
        input_ids=torch.cat([prompt_ids, target_ids]),
        prompt_length=len(prompt_ids),
        acoustic=acoustic,
        semantic=semantic,
        samples=samples,
        target=clip.target,
        anchor_of=anchors(closed, starts, speech_token_rate(model.config), recent),
    )


def _step(
    model: Any, optimizer: torch.optim.Optimizer, examples: list[_Example], hidden: HiddenSpeech | None
) -> tuple[float, float]:
    """One AdamW step over every example (and, with `hidden`, a second pass of each with the speech
    behind its transcript hidden, at a look-back drawn per pass); returns the summed loss and the
    smallest target lead over all passes."""
    optimizer.zero_grad()
    total, lead = 0.0, float("inf")
    for ex in examples:
        masks = [None] if hidden is None else [None, _hidden_mask(model, ex, hidden)]
        for mask in masks:
            logits = _logits(model, ex, mask)[ex.prompt_length - 1 : -1]  # (T, V): the target's predictions
            labels = ex.input_ids[ex.prompt_length :]
            loss = torch.nn.functional.cross_entropy(logits, labels)
            loss.backward()
            total += float(loss.detach())
            lead = min(lead, _lead(logits.detach(), labels))
    optimizer.step()
    return total, lead


def _lead(logits: torch.Tensor, labels: torch.Tensor) -> float:
    """The smallest logit lead of a target token over its runner-up (0 where it is not the top)."""
    top = logits.topk(2, dim=-1)
    right = top.indices[:, 0] == labels
    gap = torch.where(right, top.values[:, 0] - top.values[:, 1], torch.zeros_like(top.values[:, 0]))
    return float(gap.min())


def _hidden_mask(model: Any, ex: _Example, hidden: HiddenSpeech) -> torch.Tensor:
    low, high = hidden.look_back
    look_back = int(torch.randint(low, high + 1, ()))
    speech = (ex.input_ids == model.config.audio_token_id).nonzero()[:, 0]
    return hidden_speech_mask(len(ex.input_ids), speech, ex.prompt_length, ex.anchor_of, hidden, look_back)


def _logits(model: Any, ex: _Example, mask: torch.Tensor | None = None) -> torch.Tensor:  # → (L, V)
    inner = model.model
    embeds = inner.get_input_embeddings()(ex.input_ids)  # (L, d)
    features = inner.multi_modal_projector(ex.acoustic, ex.semantic)[0]  # (N, d)
    audio = ex.input_ids == model.config.audio_token_id
    embeds = embeds.masked_scatter(audio[:, None], features[: int(audio.sum())])
    attention = None if mask is None else mask[None, None]  # a 4-D mask is used as given
    hidden = inner.language_model(inputs_embeds=embeds[None], attention_mask=attention).last_hidden_state
    return model.lm_head(hidden)[0]


def _replies_match(model: Any, processor: Any, examples: list[_Example]) -> bool:
    """Greedy replies through the backend's request and decoder code equal every target."""
    tokens = read_prompt_tokens(processor, model.config, model.generation_config)
    loaded = LoadedModel(model, processor, tokens, torch.device("cpu"), torch.float32, "memory")
    decoder = GenerateDecoder(model, eos_token_ids=tokens.eos_ids)
    requests = [  # room for the whole target and a little more: a longer reply must differ
        build_request(loaded, e.samples, request_id=i, max_new_tokens=_target_length(e) + 8)
        for i, e in enumerate(examples)
    ]
    for result in decoder.decode(requests):
        text = processor.tokenizer.decode(list(result.token_ids), skip_special_tokens=True)
        if text.strip() != f"assistant\n{examples[result.id].target}":
            return False
    return True


def _target_length(example: _Example) -> int:
    return len(example.input_ids) - example.prompt_length
