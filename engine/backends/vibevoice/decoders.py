"""Decoders by name: the backend's `engine` setting picks one from `DECODERS`.

Each entry names a decoder class and its config class as "module:Class", imported only when
chosen, so a decoder whose module is not there (yet) costs nothing until asked for, and then
fails with a clear `ModelLoadError`. Every decoder implements `engine.decode.api.Decoder` and is
built the same way:

    Decoder(model, Config(max_batch=batch_size, **options), eos_token_ids=..., segment_boundary=...)

(plus `speech_anchor=...` for decoders that take one: the timestamp reader of the `speech-anchor`
eviction policy), where `options` are the decoder's own settings given by the user
(e.g. `eviction="paper-speech"` for Murmur's engine, from `VibeVoiceConfig.engine_options`),
`model` is the loaded `VibeVoiceAsrForConditionalGeneration` (its language model is
`model.model.language_model`, its head `model.lm_head`), `eos_token_ids` end a reply and
`segment_boundary` maps generated ids to the prefix that ends with the last complete segment.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from engine.decode.api import Decoder, SegmentBoundary, SpeechAnchor
from engine.errors import ModelLoadError

# name → (decoder class, its config class)
DECODERS: dict[str, tuple[str, str]] = {
    "hf": (  # transformers generate: the reference path
        "engine.backends.vibevoice.reference:GenerateDecoder",
        "engine.backends.vibevoice.reference:GenerateConfig",
    ),
    "murmur": (  # Murmur's own batched engine with KV eviction
        "engine.decode.engine:MurmurDecoder",
        "engine.decode.config:EngineConfig",
    ),
}


def create_decoder(
    name: str,
    model: Any,
    *,
    max_batch: int | None,
    eos_token_ids: Sequence[int],
    segment_boundary: SegmentBoundary | None,
    options: Mapping[str, Any] | None = None,
    speech_anchor: SpeechAnchor | None = None,
) -> Decoder:
    """Build decoder `name` around `model` (see the module docstring for the contract).

    `options` are further fields of the decoder's config (e.g. `eviction`, `window` for
    "murmur"); a field the config does not have is a `ValueError`. `max_batch` None: the config's
    own default (murmur: as many rows as the KV memory budget holds; hf: 16).
    """
    if name not in DECODERS:
        raise ValueError(f"unknown decode engine {name!r}; choose one of: {', '.join(DECODERS)}")
    decoder_path, config_path = DECODERS[name]
    decoder_cls, config_cls = _import(name, decoder_path), _import(name, config_path)
    given = dict(options or {}) | ({"max_batch": max_batch} if max_batch is not None else {})
    unknown = sorted(set(given) - {f.name for f in dataclasses.fields(config_cls)})
    if unknown:
        raise ValueError(f"the {name!r} decode engine has no option(s): {', '.join(unknown)}")
    takes_anchor = "speech_anchor" in inspect.signature(decoder_cls).parameters
    extra = {"speech_anchor": speech_anchor} if takes_anchor and speech_anchor is not None else {}
    decoder: Decoder = decoder_cls(
        model,
        config_cls(**given),
        eos_token_ids=tuple(eos_token_ids),
        segment_boundary=segment_boundary,
        **extra,
    )
    return decoder


def _import(name: str, path: str) -> Any:
    module_name, attribute = path.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module_name.startswith(exc.name):
            raise  # the module is there but something it imports is not: a real error
        raise ModelLoadError(
            f"the '{name}' decode engine is not available in this installation "
            f"({module_name} is missing); use --engine hf"
        ) from exc
    found = getattr(module, attribute, None)
    if found is None:
        raise ModelLoadError(f"the '{name}' decode engine is not available: {module_name} has no {attribute}")
    return found
