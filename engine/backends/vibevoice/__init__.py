"""VibeVoice-ASR: one speech LLM that transcribes, timestamps and labels speakers per chunk.

`VibeVoiceBackend` (registered as "vibevoice" in `engine.backends.BACKENDS`) runs the checkpoint
`VibeVoiceConfig.model` through transformers' native `VibeVoiceAsrForConditionalGeneration`.
Modules: config (settings), loading (checkpoint → model + processor), prompt (template, special
tokens), inputs (audio → decode request), budget (tokens per chunk), jsonscan + parsing (reply →
segments), boundary (segment ends in token space), reference (transformers `generate`
decoder), decoders (decoders by name), backend, tiny + tiny_clips + tiny_train (small
self-built test checkpoints, one of them trained on synthetic clips).
Importing this package does not import torch.
"""

from engine.backends.vibevoice.backend import VibeVoiceBackend
from engine.backends.vibevoice.config import DEFAULT_MODEL, VibeVoiceConfig

__all__ = ["DEFAULT_MODEL", "VibeVoiceBackend", "VibeVoiceConfig"]
