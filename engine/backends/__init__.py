"""Backends by name. `create_backend(name, **fields)` builds one from its config's fields,
`build_backend(name, config)` from a built config (`engine.recipe` makes one from user options).

Each entry names a config dataclass and a backend class; both are imported only when the backend
is created, so importing the engine stays cheap. Options that are None keep the config default;
an option the backend's config does not have is an error (so a mistyped flag is never ignored).
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

from engine.backends.base import Backend

# name → (module, config class, backend class)
BACKENDS: dict[str, tuple[str, str, str]] = {
    "whisper": ("engine.backends.whisper", "WhisperConfig", "WhisperBackend"),
    "vibevoice": ("engine.backends.vibevoice", "VibeVoiceConfig", "VibeVoiceBackend"),
}


def backend_config(name: str, **options: Any) -> Any:
    """The backend's config dataclass built from its fields `options` (None values are dropped);
    user-facing option names (`--sink`, `--speakers`…) go through `engine.recipe.recipe_from`."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")
    module_name, config_name, _ = BACKENDS[name]
    config_cls = getattr(importlib.import_module(module_name), config_name)
    fields = {f.name for f in dataclasses.fields(config_cls)}
    given = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(set(given) - fields)
    if unknown:
        raise ValueError(f"backend {name!r} has no option(s): {', '.join(unknown)}")
    return config_cls(**given)


def create_backend(name: str, **options: Any) -> Backend:
    """Build backend `name` from its config's fields; the model loads on first use."""
    return build_backend(name, backend_config(name, **options))


def build_backend(name: str, config: Any) -> Backend:
    """Backend `name` around its built `config` (e.g. `engine.recipe.Recipe.backend_config`)."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")
    module_name, _, backend_name = BACKENDS[name]
    backend_cls = getattr(importlib.import_module(module_name), backend_name)
    backend: Backend = backend_cls(config)
    return backend
