"""Named system configurations: a backend, its options and the chunking mode, chosen by name.

A `System` is a backend, its options as `murmur transcribe` flags name them (or backend config
fields; `System.recipe` reads them through the option table, `engine.recipe.recipe_from`) and the
chunking, plus a row label and a `role` for plots (`sweep`: points of the chunk-size curve; `baseline`: a
reference line such as the whisper baseline; `variant`: a single marker, e.g. an eviction
setting). `SWEEP` is the paper's benchmark: single pass and chunk sizes 30/60/120/300/600 s on the
reference decoder (HF generate), 300 s chunks on Murmur's decode engine without eviction (so
eviction speed-ups are measured against the same engine), output-, speech- and both-token KV
eviction at 300 s (the paper's settings, named presets of `engine.decode.eviction`, both readings
of its speech setting), our timestamp-anchored speech eviction, and the whisper baseline. Systems can also
be read from a JSON file (a list of objects with the `System` fields).

`unavailable(system)` says why a system cannot run here (unknown backend, an option its config
does not have, a chunk size over the model's limit) without loading any model, so a sweep reports
such systems as skipped with that reason instead of dropping them.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.backends.base import check_ready
from engine.errors import MurmurError
from engine.pipeline import PipelineConfig
from engine.recipe import Recipe, recipe_from
from engine.speakers import SpeakerConfig
from engine.stitching import StitchConfig

ROLES = ("sweep", "baseline", "variant")


@dataclass(frozen=True, slots=True)
class System:
    name: str
    backend: str
    options: tuple[tuple[str, Any], ...] = ()  # backend options, as `murmur transcribe` flags give them
    chunk_seconds: float | None = None  # None: the backend's default chunk size
    single_pass: bool = False
    label: str = ""
    role: str = "variant"
    speakers: SpeakerConfig = field(default_factory=SpeakerConfig)  # how speakers are found
    inversions: str = "repair"  # segments with inverted times: "repair" them or "drop" them (the paper)

    def __post_init__(self) -> None:
        if not self.name or any(c.isspace() or c in "/\\" for c in self.name):
            raise ValueError(f"a system name must be one word usable as a folder name, got {self.name!r}")
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, got {self.role!r}")
        self.pipeline_config()  # validates chunk size vs single pass

    @property
    def title(self) -> str:
        return self.label or self.name

    def pipeline_config(self) -> PipelineConfig:
        return PipelineConfig(
            chunk_seconds=self.chunk_seconds,
            single_pass=self.single_pass,
            speakers=self.speakers,
            stitch=StitchConfig(inversions=self.inversions),
        )

    @property
    def recipe(self) -> Recipe:
        """The system as a `Recipe`: its options read through the option table (ValueError: one
        the backend does not take)."""
        base = Recipe(self.backend, None, self.pipeline_config())
        return recipe_from(dict(self.options), self.backend, base)

    def backend_options(self) -> dict[str, Any]:
        """The options as given (option-table names, or backend config fields)."""
        return dict(self.options)

    def with_options(self, extra: Mapping[str, Any]) -> System:
        """A copy with `extra` options added (replacing options of the same name)."""
        merged = {**self.backend_options(), **extra}
        return dataclasses.replace(self, options=tuple(sorted(merged.items())))

    def with_speakers(self, speakers: SpeakerConfig) -> System:
        return dataclasses.replace(self, speakers=speakers)


def _vibevoice(
    name: str, label: str, role: str = "sweep", chunk: float | None = 300.0, **options: Any
) -> System:
    return System(name, "vibevoice", tuple(sorted(options.items())), chunk, chunk is None, label, role)


def _chunked(seconds: int) -> System:
    """The paper's chunked rows, on the reference decoder (HF generate)."""
    return _vibevoice(
        f"chunk-{seconds}", f"Chunked {seconds} s, no eviction", chunk=float(seconds), engine="hf"
    )


def _evicting(name: str, label: str, preset: str) -> System:
    """300 s chunks on Murmur's decode engine with an eviction preset of `engine.decode.eviction`."""
    return _vibevoice(name, label, "variant", engine="murmur", eviction=preset)


SWEEP: tuple[System, ...] = (
    _vibevoice("single-pass", "VibeVoice single pass", role="baseline", chunk=None, engine="hf"),
    System("whisper", "whisper", (), 30.0, False, "Whisper baseline (faster-whisper)", "baseline"),
    *(_chunked(c) for c in (30, 60, 120, 300, 600)),
    _vibevoice("murmur-300", "Chunked 300 s, murmur engine, no eviction", "variant", engine="murmur"),
    _evicting("evict-output", "+ output-token eviction (s4 w1024)", "paper-output"),
    _evicting("evict-speech", "+ speech-token eviction (d512 w1024)", "paper-speech"),
    _vibevoice(
        "evict-speech-s512",
        "+ speech-token eviction (512 sinks, w1024)",
        "variant",
        engine="murmur",
        eviction="speech",
        speech_sink=512,
        delay=32,
        window=1024,
    ),
    _evicting("evict-both", "+ both evictions (s4 w1024, d512 w1024)", "paper-both"),
    _evicting("evict-anchor", "+ timestamp-anchored speech eviction", "speech-anchor"),
)

# The paper's other rows, reachable by name in `murmur bench --systems` but not in the default sweep:
# Table 4's speech-eviction settings (S read as the delay, the authors' sinks 32 and rate 8) with the
# authors' batch-minimum cap (`table4-S-W`, what their runs did), and with this engine's per-row cap
# (`table4-S-W-row`).
PAPER_ROWS: tuple[System, ...] = tuple(
    _vibevoice(
        f"table4-{s}-{w}{suffix}",
        f"Table 4: speech eviction S {s} / W {w} (S as the delay), {cap} cap",
        "variant",
        engine="murmur",
        eviction="paper-speech",  # the authors' speech eviction: sinks 32, rate 8
        delay=s,
        window=w,
        speech_cap=cap,
    )
    for s, w in ((256, 1024), (512, 1024), (256, 1538), (512, 1538))
    for suffix, cap in (("", "batch-min"), ("-row", "row"))
)


def unavailable(system: System) -> str | None:
    """Why `system` cannot run in this installation, or None when it can (no model is loaded)."""
    from engine.backends import BACKENDS

    if system.backend not in BACKENDS:
        return f"backend {system.backend!r} is not available (known: {', '.join(sorted(BACKENDS))})"
    module_name, _, class_name = BACKENDS[system.backend]
    try:
        config = system.recipe.backend_config
        backend_cls = getattr(importlib.import_module(module_name), class_name)
    except (ValueError, TypeError) as exc:
        return str(exc)
    except ImportError as exc:
        return f"backend {system.backend!r} cannot be imported: {exc}"
    limit = float(getattr(backend_cls, "max_chunk_seconds", float("inf")))
    if system.chunk_seconds is not None and system.chunk_seconds > limit:
        chunk = system.chunk_seconds
        return f"the {system.backend} backend takes at most {limit:g} s per chunk, not {chunk:g}"
    try:
        check_ready(backend_cls(config))  # the checkpoint, not the model
    except MurmurError as exc:
        return str(exc)
    return None


def select(systems: Sequence[System], names: Iterable[str] | None) -> list[System]:
    """The systems called `names`, in that order (all when None)."""
    if names is None:
        return list(systems)
    by_name = {s.name: s for s in systems}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"unknown system(s) {', '.join(unknown)}; known: {', '.join(by_name)}")
    return [by_name[n] for n in dict.fromkeys(names)]


def apply_overrides(systems: Sequence[System], overrides: Mapping[str, Mapping[str, Any]]) -> list[System]:
    """Add per-backend options (`{"vibevoice": {"model": "/models/tiny"}}`) to every matching system."""
    return [s.with_options(overrides[s.backend]) if s.backend in overrides else s for s in systems]


def read_systems(path: Path) -> list[System]:
    """Systems from a JSON list of {name, backend, options, chunk_seconds, single_pass, label, role,
    speakers (SpeakerConfig fields)}."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read systems from {path}: {exc}") from exc
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of systems")
    systems = []
    for item in data:
        if not isinstance(item, dict):
            raise ValueError(f"{path}: each system is an object, got {item!r}")
        options = item.get("options", {})
        if not isinstance(options, dict):
            raise ValueError(f"{path}: options of {item.get('name')!r} must be an object")
        fields = {k: v for k, v in item.items() if k not in ("options", "speakers")}
        try:
            speakers = SpeakerConfig(**item.get("speakers", {}))
            systems.append(System(**fields, options=tuple(sorted(options.items())), speakers=speakers))
        except TypeError as exc:
            raise ValueError(f"{path}: bad system {item.get('name')!r}: {exc}") from exc
    return systems


def parse_value(text: str) -> Any:
    """A command-line option value: a JSON literal (number, true/false, null, list) or a string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def to_dict(system: System) -> dict[str, Any]:
    return {
        "name": system.name,
        "backend": system.backend,
        "options": system.backend_options(),
        "chunk_seconds": system.chunk_seconds,
        "single_pass": system.single_pass,
        "label": system.label,
        "role": system.role,
        "inversions": system.inversions,
        "speakers": {k: v for k, v in dataclasses.asdict(system.speakers).items() if k != "hf_token"},
    }
