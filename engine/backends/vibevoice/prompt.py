"""The VibeVoice-ASR prompt and the special tokens it uses.

The prompt is the checkpoint's own chat layout (no assistant header: the model writes
`<|im_start|>assistant\\n` itself), with one audio placeholder that the processor expands into one
token per 3200 samples (7.5 per second):

    <|im_start|>system
    You are a helpful assistant that transcribes audio input into text output in JSON format.<|im_end|>
    <|im_start|>user
    <|object_ref_start|><|box_start|><|object_ref_end|>
    This is a 12.34 seconds audio, please transcribe it with these keys: Start time, End time, \
    Speaker ID, Content<|im_end|>

(the last line is one line; it is broken here only to fit).
With context (names, terms) the last line becomes `This is a 12.34 seconds audio, with extra info:
{context}\\n\\nPlease transcribe it with these keys: ...`. Token *strings* come from the processor
and token *ids* from the tokenizer and model config, never from constants; a checkpoint whose
tokenizer lacks one of them is refused with `ModelLoadError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.errors import ModelLoadError

SYSTEM_PROMPT = "You are a helpful assistant that transcribes audio input into text output in JSON format."
KEYS = "Start time, End time, Speaker ID, Content"
IM_START, IM_END = "<|im_start|>", "<|im_end|>"


@dataclass(frozen=True, slots=True)
class PromptTokens:
    """The special tokens of one checkpoint: strings for the prompt, ids for decoding."""

    audio: str  # the per-frame audio placeholder (<|box_start|>)
    audio_bos: str  # opens the audio span (<|object_ref_start|>)
    audio_eos: str  # closes it (<|object_ref_end|>)
    audio_id: int
    eos_ids: tuple[int, ...]  # any of these ends a reply (<|endoftext|>, <|im_end|>)


def instruction(duration: float, context: str | None = None) -> str:
    """The user turn's text after the audio: states the duration (2 decimals) and any context."""
    if context:
        return (
            f"This is a {duration:.2f} seconds audio, with extra info: {context}\n\n"
            f"Please transcribe it with these keys: {KEYS}"
        )
    return f"This is a {duration:.2f} seconds audio, please transcribe it with these keys: {KEYS}"


def build_prompt(duration: float, tokens: PromptTokens, context: str | None = None) -> str:
    """The full prompt text for `duration` seconds of audio, one audio placeholder in it."""
    return (
        f"{IM_START}system\n{SYSTEM_PROMPT}{IM_END}\n"
        f"{IM_START}user\n{tokens.audio_bos}{tokens.audio}{tokens.audio_eos}\n"
        f"{instruction(duration, context)}{IM_END}\n"
    )


def read_prompt_tokens(processor: Any, model_config: Any, generation_config: Any = None) -> PromptTokens:
    """The special tokens of a loaded processor + model; `ModelLoadError` when they do not fit."""
    tokenizer = processor.tokenizer
    vocab = tokenizer.get_vocab()
    strings = {
        "audio": processor.audio_token,
        "audio_bos": processor.audio_bos_token,
        "audio_eos": processor.audio_eos_token,
        "im_start": IM_START,
        "im_end": IM_END,
    }
    missing = [s for s in strings.values() if s not in vocab]
    if missing:
        raise ModelLoadError(f"the checkpoint's tokenizer lacks the special tokens {', '.join(missing)}")
    audio_id = vocab[strings["audio"]]
    if getattr(model_config, "audio_token_id", audio_id) != audio_id:
        raise ModelLoadError(
            f"the checkpoint's model and tokenizer disagree on the audio token id "
            f"({model_config.audio_token_id} vs {audio_id}): the folder mixes two checkpoints"
        )
    return PromptTokens(
        audio=strings["audio"],
        audio_bos=strings["audio_bos"],
        audio_eos=strings["audio_eos"],
        audio_id=audio_id,
        eos_ids=_eos_ids(tokenizer, vocab[IM_END], generation_config),
    )


def _eos_ids(tokenizer: Any, im_end_id: int, generation_config: Any) -> tuple[int, ...]:
    configured = getattr(generation_config, "eos_token_id", None)
    listed = configured if isinstance(configured, list | tuple) else [configured]
    ids = [*listed, tokenizer.eos_token_id, im_end_id]
    return tuple(dict.fromkeys(int(i) for i in ids if i is not None))

