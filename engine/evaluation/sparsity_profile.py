"""What an attention-sparsity profile holds (`engine.evaluation.sparsity` measures it,
`engine.evaluation.plots` draws it): per layer, the fraction of speech tokens that holds the
attention mass, and the four kinds of KV entries (kept or evictable, speech or text).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

CATEGORIES = ("kept speech", "evictable speech", "kept text", "evictable text")


@dataclass(frozen=True, slots=True)
class LayerSparsity:
    layer: int
    speech_needed: float  # fraction of speech tokens holding `mass` of the attention on speech
    kept_speech: float  # the four fractions of all KV entries (they sum to 1)
    evictable_speech: float
    kept_text: float
    evictable_text: float


@dataclass(frozen=True, slots=True, eq=False)
class SparsityProfile:
    mass: float
    steps: int
    prompt_tokens: int
    speech_tokens: int
    layers: tuple[LayerSparsity, ...]
    speech_needed_per_step: np.ndarray = field(repr=False)  # (layers, steps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mass": self.mass,
            "steps": self.steps,
            "prompt_tokens": self.prompt_tokens,
            "speech_tokens": self.speech_tokens,
            "layers": [asdict(layer) for layer in self.layers],
        }
