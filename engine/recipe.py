"""A transcription system as one typed value: `Recipe(backend, config, pipeline)`.

`backend` names an entry of `engine.backends.BACKENDS`, `config` is that backend's frozen config
(nested: VibeVoice's `decode` holds the engine config, which holds the eviction config) and
`pipeline` the `PipelineConfig`. `recipe_from(values)` is the one path from user-given option
values (keyed as `engine.options.option_rows()` names them, None: not given) to a validated recipe: every
surface (CLI, app, server, eval sweep files, Ray workers) goes through it, so a mistake gets the
same one message everywhere. `to_dict`/`from_dict` carry a recipe as JSON values: only what
differs from the defaults, nested as the configs nest. Importing this module loads no torch.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.backends import BACKENDS
from engine.decode.eviction import EvictionConfig
from engine.options import Option, by_name
from engine.pipeline_config import PipelineConfig

EVICTION = ("decode", "eviction")  # where the eviction settings sit in VibeVoice's config


def config_class(backend: str) -> type:
    """The config dataclass of backend `backend` (its module is torch-free)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of: {', '.join(BACKENDS)}")
    module_name, config_name, _ = BACKENDS[backend]
    found: type = getattr(importlib.import_module(module_name), config_name)
    return found


@dataclass(frozen=True, slots=True)
class Recipe:
    backend: str = "whisper"
    config: Any = None  # the backend's config; None: its defaults
    pipeline: PipelineConfig = field(default_factory=PipelineConfig)

    def __post_init__(self) -> None:
        cls = config_class(self.backend)
        if self.config is None:  # the backend's defaults, so equal recipes compare equal
            object.__setattr__(self, "config", cls())
        if not isinstance(self.config, cls):
            raise ValueError(f"the {self.backend} backend takes a {cls.__name__}, got {self.config!r}")

    @property
    def backend_config(self) -> Any:
        return self.config

    def backend_options(self) -> dict[str, Any]:
        """The backend config's fields that differ from its defaults, as values (for
        `create_backend(backend, **options)`, which the server and Ray workers call)."""
        config, default = self.backend_config, config_class(self.backend)()
        names = [f.name for f in dataclasses.fields(config)]
        return {n: getattr(config, n) for n in names if getattr(config, n) != getattr(default, n)}

    def to_dict(self) -> dict[str, Any]:
        """JSON values: the backend's name, and what differs from the defaults."""
        return {
            "backend": self.backend,
            "config": changes(self.backend_config, config_class(self.backend)()),
            "pipeline": changes(self.pipeline, PipelineConfig()),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Recipe:
        """The recipe `to_dict` wrote; ValueError names what does not fit."""
        unknown = sorted(set(data) - {"backend", "config", "pipeline"})
        if unknown:
            raise ValueError(f"a recipe has no {', '.join(unknown)}")
        backend = str(data.get("backend", "whisper"))
        config = changed(config_class(backend)(), data.get("config") or {}, backend)
        return cls(backend, config, changed(PipelineConfig(), data.get("pipeline") or {}, "pipeline"))


def recipe_from(values: Mapping[str, Any], backend: str | None = None, base: Recipe | None = None) -> Recipe:
    """`base` (default: the backend's defaults) with option `values` applied; None values are not
    given. Keys are `Option.name`s, plus whole fields of the backend config by name (e.g. `decode`,
    `loop_recovery`, as sweep files and the engine's own callers give them)."""
    base = base or Recipe(backend or "whisper")
    backend = backend or base.backend
    given = {k: v for k, v in values.items() if v is not None}
    if backend != base.backend:
        base = Recipe(backend, None, base.pipeline)
    config_fields = {f.name for f in dataclasses.fields(config_class(backend))}
    table = by_name()
    fields = {k: given.pop(k) for k in list(given) if k not in table and k in config_fields}
    unknown = sorted(k for k in given if k not in table or not table[k].applies_to(backend))
    if unknown:
        raise ValueError(f"backend {backend!r} has no option(s): {', '.join(unknown)}")
    pipeline: dict[str, Any] = {}
    eviction: dict[str, Any] = {}
    for name, value in given.items():
        option = table[name]
        target = pipeline if option.owner == "pipeline" else fields
        path = option.fields
        value = option.field_value(_parsed(option, value))
        if path[:2] == EVICTION:
            eviction[path[2]] = value
        else:
            _put(target, path, value)
    config = changed(base.backend_config, fields, backend)
    if eviction:
        config = _with_eviction(config, eviction)
    return Recipe(backend, config, changed(base.pipeline, pipeline, "pipeline"))


def _parsed(option: Option, value: Any) -> Any:
    """A value given as text (a sweep file, a form) read as the flag reads it; one message per mistake."""
    if not isinstance(value, str) or option.kind is str:
        return value
    try:
        return option.kind(value)
    except (ValueError, TypeError, argparse.ArgumentTypeError) as exc:
        raise ValueError(f"{option.flag}: {exc}") from exc


def _with_eviction(config: Any, given: dict[str, Any]) -> Any:
    policy = given.pop("policy", None)
    start = EvictionConfig.named(policy) if policy is not None else config.decode.eviction
    eviction = start.changed(given.pop("window", None), **given)
    return dataclasses.replace(config, decode=dataclasses.replace(config.decode, eviction=eviction))


def _put(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for name in path[:-1]:
        tree = tree.setdefault(name, {})
    tree[path[-1]] = value


def changed(base: Any, values: Mapping[str, Any], where: str) -> Any:
    """`base` (a frozen dataclass) with `values` replacing its fields; a dict value for a field that
    holds a dataclass changes that one in turn, a list becomes a tuple. Unknown names: ValueError."""
    names = {f.name for f in dataclasses.fields(base)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ValueError(f"{where} has no setting(s): {', '.join(unknown)}")
    updates = {}
    for name, value in values.items():
        current = getattr(base, name)
        if dataclasses.is_dataclass(current) and isinstance(value, Mapping):
            value = changed(current, value, f"{where}.{name}")
        elif isinstance(current, tuple) and isinstance(value, list):
            value = _tuple_like(current, value)
        updates[name] = value
    try:
        return dataclasses.replace(base, **updates)
    except TypeError as exc:
        raise ValueError(f"{where}: {exc}") from exc


def _tuple_like(current: tuple[Any, ...], value: list[Any]) -> tuple[Any, ...]:
    kind = type(current[0]) if current and dataclasses.is_dataclass(current[0]) else None
    return tuple(kind(**v) if kind and isinstance(v, Mapping) else v for v in value)


def changes(value: Any, default: Any) -> dict[str, Any]:
    """The fields of `value` that differ from `default`'s, as JSON values (nested as they nest)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(value):
        mine, theirs = getattr(value, f.name), getattr(default, f.name)
        if mine == theirs:
            continue
        both = dataclasses.is_dataclass(mine) and dataclasses.is_dataclass(theirs)
        out[f.name] = changes(mine, theirs) if both and type(mine) is type(theirs) else plain(mine)
    return out


def plain(value: Any) -> Any:
    """A config value as JSON values: dataclasses as dicts, tuples as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    return value

