"""Tiny VibeVoice-ASR checkpoints built offline, for tests, benchmarks and evaluation dry runs.

- `save_tiny_checkpoint(folder)`: a random-weight checkpoint with the real architecture at toy
  size (Qwen2 text model: 2 layers, hidden 64, 4 heads / 2 KV heads; both audio encoders: hidden
  16, 8 filters, one block per stage, downsampling [2,2,4,5,5,8]) and a small byte-level BPE
  tokenizer carrying every special token the prompt uses (its ids differ from Qwen's; code reads
  them from the tokenizer). Saved with `save_pretrained`, loaded back like any real checkpoint.
- `tiny_trained_model(cache_dir, recipe)`: the same shape trained on the CPU to reply with the exact
  reference JSON of a few synthetic clips (`tiny_clips`); built once per recipe and cached under
  `<repo>/.cache/murmur/` in a folder named by a hash of the whole recipe (clip spec included). The
  folder also holds the clips (`clips/clipN.flac` + `.json`) and `training.json` (steps, seconds).
  The default recipe's clips last 5–9 s; `LONG_RECIPE`'s last 20–40 s (6–10 turns, 2–4 voices).
  `CAPACITY_RECIPE`'s last 55–90 s, adds the bundled demo meeting cut into two chunks
  (`clips/meetingN`), and trains half its passes with the speech behind each transcript hidden
  (`tiny_masks.HiddenSpeech`), so the model reads the audio near what it writes and evicting the
  speech a transcript has left behind saves a real share of a row without changing its words.
- `read_clips(folder)`: the cached clips with their references.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.backends.vibevoice.prompt import SYSTEM_PROMPT, instruction
from engine.testing.clip_spec import ClipSpec
from engine.testing.tiny_masks import HiddenSpeech
from engine.types import Segment

SPECIAL_TOKENS = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|image_pad|>",
)  # fmt: skip
# The chat template microsoft/VibeVoice-ASR-HF ships with its processor (no generation prompt).
CHAT_TEMPLATE = (
    '{%- set system_prompt = system_prompt | default("' + SYSTEM_PROMPT + '") -%}\n'
    "<|im_start|>system\n{{ system_prompt }}<|im_end|>\n"
    '{%- set audio_token = audio_token | default("<|box_start|>") -%}\n'
    '{%- set audio_start_token = "<|object_ref_start|>" -%}\n'
    '{%- set audio_end_token = "<|object_ref_end|>" -%}\n'
    "{%- for message in messages -%}\n"
    "    {%- if message['role'] == 'user' -%}\n"
    "{{ '\\n' }}<|im_start|>user{{ '\\n' }}"
    "{%- set text_items = message['content'] | selectattr('type', 'equalto', 'text') | list -%}\n"
    "        {%- set context_text = text_items[0]['text'] if text_items else none -%}\n"
    "        {%- for item in message['content'] -%}\n"
    "            {%- if item['type'] == 'audio' -%}\n"
    '{{ audio_start_token }}{{ audio_token }}{{ audio_end_token }}{{ "\\n" }}{%- if context_text -%}\n'
    "This is a <|AUDIO_DURATION|> seconds audio, with extra info: {{ context_text }}\n\n"
    "Please transcribe it with these keys: Start time, End time, Speaker ID, Content{%- else -%}\n"
    "This is a <|AUDIO_DURATION|> seconds audio, please transcribe it with these keys: "
    "Start time, End time, Speaker ID, Content{%- endif -%}\n"
    "            {%- endif -%}\n"
    "        {%- endfor -%}\n"
    "<|im_end|>{{ '\\n' }}\n"
    "    {%- endif -%}\n"
    "{%- endfor -%}"
)
RECIPE_VERSION = 1


@dataclass(frozen=True, slots=True)
class TinyShape:
    layers: int = 2
    hidden: int = 64
    heads: int = 4
    kv_heads: int = 2
    intermediate: int = 128
    vocab: int = 512  # BPE vocabulary size, special tokens included
    encoder_hidden: int = 16
    encoder_filters: int = 8
    text_init: float = 0.02
    encoder_init: float = 0.08  # large enough that audio features are O(1), not ~1e-8


@dataclass(frozen=True, slots=True)
class TinyRecipe:
    shape: TinyShape = TinyShape()
    clips: int = 3
    clip: ClipSpec = field(default_factory=ClipSpec)  # the clips' length, turns, voices and sentence lengths
    clip_seed: int = 0
    seed: int = 0
    learning_rate: float = 3e-3
    max_steps: int = 600
    margin: float = 2.0  # logit lead of every target token over the runner-up before stopping
    hidden: HiddenSpeech | None = None  # also train each clip with the speech behind its transcript hidden
    meeting_pieces: int = 0  # the bundled demo meeting cut into this many clips, trained on too

    def key(self) -> str:
        import transformers

        version = ".".join(transformers.__version__.split(".")[:2])
        blob = json.dumps([RECIPE_VERSION, version, asdict(self)], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


# Clips of 20–40 s: 6, 8 and 10 turns of 10–15-word sentences by 2, 3 and 4 voices (21.7, 30.0 and
# 35.9 s). A vocabulary of 1,024 makes every corpus word one token, so a reply takes about 8.5 tokens
# per second of speech and fits the default token budget (`budget.token_budget`) of its clip.
LONG_RECIPE = TinyRecipe(
    shape=TinyShape(vocab=1024),
    clip=ClipSpec(seconds=(20.0, 40.0), turns=(6, 8, 10), voices=(2, 3, 4), words=(10, 15)),
    max_steps=3000,
)
# Clips of 55–90 s: 16, 20 and 24 turns (59.5, 74.6 and 87.2 s), long enough that a row's system
# tokens and last outputs are a small share of it, as in a 300 s chunk; trained also with the speech
# behind each transcript hidden (`tiny_masks`), so it reads the audio near what it writes, as a real
# speech LLM does, and eviction can be measured on it (`bench/kv_capacity.py`).
CAPACITY_RECIPE = replace(
    LONG_RECIPE,
    clip=replace(LONG_RECIPE.clip, seconds=(55.0, 90.0), turns=(16, 20, 24)),
    hidden=HiddenSpeech(look_back=(16, 64), sinks=8, look_ahead=32),
    meeting_pieces=2,
)


def demo_meeting() -> Path:
    """The bundled demo meeting (`meeting.flac`, with `meeting.stm` beside it)."""
    return Path(__file__).resolve().parents[2] / "resources" / "demo" / "meeting.flac"


def repo_cache() -> Path:
    """`<repo>/.cache/murmur`, where built test models live (git-ignored)."""
    return Path(__file__).resolve().parents[2] / ".cache" / "murmur"


def tokenizer_corpus(extra: tuple[str, ...] = ()) -> list[str]:
    """Texts the tiny tokenizer learns its merges from: the prompt, reply syntax, `extra`."""
    from engine.synth.script import load_corpus

    prompt = [SYSTEM_PROMPT, instruction(12.34), instruction(5.0, "Alice, Bob"), "assistant\n", "user\n"]
    reply = ['[{"Start":0.05,"End":1.25,"Speaker":0,"Content":"Yes."},{"Start":2.5,"End":3.75,"Speaker":1,']
    return prompt * 20 + reply * 20 + list(extra) * 5 + list(load_corpus().all_sentences)


def build_tokenizer(texts: list[str], vocab_size: int) -> Any:
    """A byte-level BPE tokenizer trained on `texts`, with `SPECIAL_TOKENS` (ids 0..6)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|image_pad|>")


def build_processor(tokenizer: Any) -> Any:
    from transformers import VibeVoiceAcousticTokenizerFeatureExtractor, VibeVoiceAsrProcessor

    return VibeVoiceAsrProcessor(
        feature_extractor=VibeVoiceAcousticTokenizerFeatureExtractor(),
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
    )


def tiny_config(processor: Any, shape: TinyShape) -> Any:
    from transformers import VibeVoiceAsrConfig

    encoder = {
        "model_type": "vibevoice_acoustic_tokenizer_encoder",
        "hidden_size": shape.encoder_hidden,
        "num_filters": shape.encoder_filters,
        "depths": [1] * 7,
        "downsampling_ratios": [2, 2, 4, 5, 5, 8],
        "initializer_range": shape.encoder_init,
    }
    text = {
        "model_type": "qwen2",
        "num_hidden_layers": shape.layers,
        "hidden_size": shape.hidden,
        "num_attention_heads": shape.heads,
        "num_key_value_heads": shape.kv_heads,
        "intermediate_size": shape.intermediate,
        "vocab_size": len(processor.tokenizer),
        "initializer_range": shape.text_init,
        "max_position_embeddings": 32768,
    }
    return VibeVoiceAsrConfig(
        acoustic_tokenizer_encoder_config=dict(encoder),
        semantic_tokenizer_encoder_config=dict(encoder),
        text_config=text,
        audio_token_id=processor.audio_token_id,
        audio_bos_token_id=processor.audio_bos_token_id,
        audio_eos_token_id=processor.audio_eos_token_id,
    )


def new_tiny_model(shape: TinyShape, seed: int, extra_texts: tuple[str, ...] = ()) -> tuple[Any, Any]:
    """A random-weight (model, processor) pair of `shape`, generation settings as the real one."""
    import torch
    from transformers import VibeVoiceAsrForConditionalGeneration

    processor = build_processor(build_tokenizer(tokenizer_corpus(extra_texts), shape.vocab))
    torch.manual_seed(seed)
    model = VibeVoiceAsrForConditionalGeneration(tiny_config(processor, shape)).eval()
    tok = processor.tokenizer
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.do_sample = False
    return model, processor


def save_tiny_checkpoint(folder: Path, shape: TinyShape | None = None, seed: int = 0) -> Path:
    """Write a random-weight tiny checkpoint (model + processor) to `folder`."""
    model, processor = new_tiny_model(shape or TinyShape(), seed)
    _save(model, processor, folder)
    return folder


def tiny_trained_model(cache_dir: Path | None = None, recipe: TinyRecipe | None = None) -> Path:
    """The folder of the trained tiny checkpoint, training it first if this recipe is not cached."""
    recipe = recipe or TinyRecipe()
    root = Path(cache_dir) if cache_dir is not None else repo_cache()
    final = root / f"vibevoice-tiny-{recipe.key()}"
    if (final / "training.json").is_file():
        return final
    building = root / f".building-{recipe.key()}-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    try:
        _build_trained(building, recipe)
        try:
            building.rename(final)
        except OSError:
            if not (final / "training.json").is_file():  # not a concurrent build that won
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return final


def read_clips(folder: Path) -> list[tuple[Path, tuple[Segment, ...]]]:
    """The trained model's clips: (audio file, reference segments) in order."""
    out = []
    for meta in sorted((Path(folder) / "clips").glob("*.json")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        segments = tuple(Segment(s["start"], s["end"], s["text"], s["speaker"]) for s in data["segments"])
        out.append((meta.with_suffix(".flac"), segments))
    return out


def _build_trained(folder: Path, recipe: TinyRecipe) -> None:
    from engine.testing.tiny_clips import recording_clips, synthesize_clips
    from engine.testing.tiny_train import fit_to_targets

    clips = synthesize_clips(recipe.clips, recipe.clip_seed, recipe.clip)
    if recipe.meeting_pieces:
        audio = demo_meeting()
        clips += recording_clips(audio, audio.with_suffix(".stm"), recipe.meeting_pieces)
    model, processor = new_tiny_model(recipe.shape, recipe.seed, tuple(c.target for c in clips))
    report = fit_to_targets(model, processor, clips, folder / "clips", recipe)
    _save(model, processor, folder)
    (folder / "training.json").write_text(json.dumps(report, indent=1), encoding="utf-8")


def _save(model: Any, processor: Any, folder: Path) -> None:
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        model.save_pretrained(folder)
        processor.save_pretrained(folder)
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()
