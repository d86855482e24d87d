"""Transcription settings: what the user chose, how it maps onto the engine, how it is remembered.

`TranscribeSettings` is a frozen, validated record of the dialog's fields (0 / "" mean "the
backend's default"). `OPTION_SPECS` describes each field once — label, kind, limits, tooltip — so
the settings dialog is generated from it; a backend gains a field in the dialog by having a config
field of the same name. `supported_options(backend)` says which fields the installed engine takes
for that backend (its config, `PipelineConfig`, or a dataclass nested in `PipelineConfig`), and
`engine_arguments(settings)` turns the settings into `Pipeline.create` arguments, leaving out
defaults. `SettingsStore` keeps settings, recent files and export choices in a `QSettings`
(as JSON strings, so every type round-trips on every platform).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSettings

from engine.backends import BACKENDS
from engine.decode.eviction import POLICIES, PRESETS

if TYPE_CHECKING:
    from engine.pipeline import PipelineConfig

RECENT_LIMIT = 10
LANGUAGES = ("en", "auto", "ar", "da", "de", "es", "fi", "fr", "hi", "it", "ja", "ko", "nl", "no", "pl", "pt",
             "ru", "sv", "tr", "uk", "zh")  # fmt: skip
EVICTION_CHOICES = (*POLICIES, *PRESETS)  # the policy names and paper presets (a torch-free module)


@dataclass(frozen=True, slots=True)
class OptionSpec:
    key: str  # the engine config field it sets
    label: str
    kind: str  # "model" | "choice" | "int" | "float" | "bool" | "terms"
    tooltip: str
    choices: tuple[str, ...] = ()
    minimum: float = 0
    maximum: float = 0
    special: str = ""  # what 0 means for numbers ("backend default", "automatic")


OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec("model", "Model", "model", "A model name, or a folder holding a downloaded model. "
               "Empty: the backend's default model."),
    OptionSpec("device", "Device", "choice", "Where the model runs; auto picks a GPU when there is one.",
               choices=("auto", "cpu", "cuda")),
    OptionSpec("chunk_seconds", "Chunk size (s)", "float", "Longest piece of audio sent to the model "
               "at once, cut in silence.", minimum=0, maximum=3600, special="backend default"),
    OptionSpec("single_pass", "Single pass", "bool", "Send the whole recording to the model in one "
               "piece (only for models that take long inputs)."),
    OptionSpec("quality", "Quality", "choice", "fast: chunks decoded in batches, broken ones again; "
               "accurate: decoded one after another, each knowing the text before it (fewer errors, "
               "slower).", choices=("fast", "accurate")),
    OptionSpec("batch_size", "Batch size", "int", "Chunks decoded together; larger is faster on a GPU "
               "and needs more memory.", minimum=0, maximum=512, special="backend default"),
    OptionSpec("dtype", "Precision", "choice", "Weights' number format; auto picks bfloat16 on a GPU "
               "and float32 on the CPU.", choices=("auto", "float32", "bfloat16", "float16")),
    OptionSpec("engine", "Decoder", "choice", "murmur: Murmur's batched decode engine (needed for KV "
               "eviction); hf: transformers' generate, the reference.", choices=("murmur", "hf")),
    OptionSpec("eviction", "KV eviction", "choice", "Drop old attention entries while decoding long "
               "chunks (Murmur decoder): faster, slightly less accurate.", choices=EVICTION_CHOICES),
    OptionSpec("diarizer", "Speaker finder", "choice", "Who speaks when: embedded (offline, built in), "
               "pyannote (needs its weights) or none.", choices=("embedded", "pyannote", "none")),
    OptionSpec("pyannote", "pyannote pipeline", "model", "A folder with a pyannote config.yaml, or a hub "
               "id. Empty: pyannote's default pipeline."),
    OptionSpec("num_speakers", "Speakers", "int", "How many people speak, if you know it.",
               maximum=64, special="automatic"),
    OptionSpec("min_speakers", "At least", "int", "The fewest speakers to look for.", maximum=64,
               special="automatic"),
    OptionSpec("max_speakers", "At most", "int", "The most speakers to look for.", maximum=64,
               special="automatic"),
    OptionSpec("language", "Language", "choice", "The language spoken; auto detects it. The bundled "
               "tiny.en (and every model whose name ends in .en) is English-only: choose a "
               "multilingual model (e.g. small) for other languages.", choices=LANGUAGES),
    OptionSpec("context", "Names and terms", "terms", "Names, jargon and acronyms the recording "
               "contains, comma separated; they help the model spell them."),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class TranscribeSettings:
    backend: str = "whisper"
    model: str = ""
    device: str = "auto"
    chunk_seconds: float = 0.0
    single_pass: bool = False
    quality: str = "fast"
    batch_size: int = 0
    dtype: str = "auto"
    engine: str = "murmur"
    eviction: str = "none"
    diarizer: str = "embedded"
    pyannote: str = ""
    num_speakers: int = 0
    min_speakers: int = 0
    max_speakers: int = 0
    language: str = "en"
    context: tuple[str, ...] = ()
    run_on: str = "local"  # or "server": a Murmur server (app.remote_settings)
    server_url: str = ""
    server_key: str = ""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown backend {self.backend!r}; choose one of: {', '.join(BACKENDS)}")
        if self.run_on not in ("local", "server") or (self.run_on == "server" and not self.server_url):
            raise ValueError("to run on a Murmur server, give its address (e.g. http://gpu-box:8000)")
        for spec in OPTION_SPECS:
            value = getattr(self, spec.key)
            if spec.kind == "choice" and value not in spec.choices:
                raise ValueError(f"{spec.label}: choose one of {', '.join(spec.choices)}")
            if spec.kind in ("int", "float") and not spec.minimum <= value <= spec.maximum:
                raise ValueError(f"{spec.label} must be between {spec.minimum:g} and {spec.maximum:g}")
        if self.min_speakers and self.max_speakers and self.min_speakers > self.max_speakers:
            raise ValueError("the fewest speakers cannot exceed the most speakers")
        if self.backend == "whisper" and self.language != "en":
            from engine.backends.whisper import english_only

            if english_only(self.model or None):
                raise ValueError(f"Language: the model {self.model or 'tiny.en (bundled)'} is English-only; "
                                 "choose English or a multilingual model such as small")

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON values, without the server's API key (projects travel)."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v
                for f in dataclasses.fields(self) if f.name != "server_key"}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TranscribeSettings:
        """Settings from a saved dict; unknown keys are ignored, bad values fall back to defaults."""
        names = {f.name: f for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        if "context" in values:
            values["context"] = tuple(str(t) for t in values["context"] or ())
        try:
            return cls(**values)
        except (ValueError, TypeError):
            return cls(**{k: v for k, v in values.items() if k == "backend" and v in BACKENDS})

    def value_for_engine(self, key: str) -> Any:
        """The value to hand the engine, or None for "use the default"."""
        value = getattr(self, key)
        if key == "eviction":
            return None if value == "none" else value
        return value or None


def parse_terms(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.strip() for t in text.replace("\n", ",").split(",") if t.strip()))


def _fields(cls: Any) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()


def _backend_config_class(backend: str) -> Any:
    module_name, config_name, _ = BACKENDS[backend]
    return getattr(importlib.import_module(module_name), config_name)


def option_targets(backend: str) -> dict[str, tuple[str, ...]]:
    """Where each option goes: ("backend",), ("pipeline",) or ("pipeline", nested field)."""
    from engine.pipeline import PipelineConfig

    targets: dict[str, tuple[str, ...]] = {}
    backend_fields = _fields(_backend_config_class(backend))
    nested = _nested_defaults()
    for spec in OPTION_SPECS:
        if spec.key in _fields(PipelineConfig):
            targets[spec.key] = ("pipeline",)
        elif spec.key in backend_fields:
            targets[spec.key] = ("backend",)
        else:
            owner = next((name for name, default in nested.items() if spec.key in _fields(default)), None)
            if owner is not None:
                targets[spec.key] = ("pipeline", owner)
    return targets


def _nested_defaults() -> dict[str, Any]:
    from engine.pipeline import PipelineConfig

    base = PipelineConfig()
    return {f.name: getattr(base, f.name) for f in dataclasses.fields(base)
            if dataclasses.is_dataclass(getattr(base, f.name))}  # fmt: skip


def supported_options(backend: str) -> set[str]:
    return set(option_targets(backend))


def engine_arguments(settings: TranscribeSettings) -> tuple[str, PipelineConfig, dict[str, Any]]:
    """`(backend, PipelineConfig, backend options)` for `Pipeline.create`; defaults left out."""
    from engine.pipeline import PipelineConfig

    pipeline: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    backend_options: dict[str, Any] = {}
    for key, target in option_targets(settings.backend).items():
        value = settings.value_for_engine(key)
        if value is None:
            continue
        if target == ("backend",):
            backend_options[key] = value
        elif target == ("pipeline",):
            pipeline[key] = value
        else:
            nested.setdefault(target[1], {})[key] = value
    defaults = _nested_defaults()
    for name, values in nested.items():
        pipeline[name] = dataclasses.replace(defaults[name], **values)
    return settings.backend, PipelineConfig(**pipeline), backend_options


@dataclass(slots=True)
class SettingsStore:
    """Typed access to what the app remembers between runs."""

    qsettings: QSettings = field(default_factory=lambda: QSettings("Murmur", "Murmur"))

    def _get_json(self, key: str, default: Any) -> Any:
        raw = self.qsettings.value(key, "")
        try:
            return json.loads(raw) if raw else default
        except (TypeError, ValueError):
            return default

    def _set_json(self, key: str, value: Any) -> None:
        self.qsettings.setValue(key, json.dumps(value))
        self.qsettings.sync()

    def transcribe_settings(self) -> TranscribeSettings:
        data = self._get_json("transcribe", {})
        key = str(self.qsettings.value("server_key", ""))
        return TranscribeSettings.from_dict({**data, "server_key": key} if isinstance(data, dict) else {})

    def set_transcribe_settings(self, settings: TranscribeSettings) -> None:
        self.qsettings.setValue("server_key", settings.server_key)  # kept here only, never in projects
        self._set_json("transcribe", settings.to_dict())

    def recent_files(self) -> list[str]:
        files = self._get_json("recent", [])
        return [str(f) for f in files] if isinstance(files, list) else []

    def add_recent_file(self, path: str) -> list[str]:
        files = [path] + [f for f in self.recent_files() if f != path]
        self._set_json("recent", files[:RECENT_LIMIT])
        return files[:RECENT_LIMIT]

    def clear_recent_files(self) -> None:
        self._set_json("recent", [])

    def export_choices(self) -> dict[str, Any]:
        data = self._get_json("export", {})
        return data if isinstance(data, dict) else {}

    def set_export_choices(self, choices: dict[str, Any]) -> None:
        self._set_json("export", choices)

    def value(self, key: str, default: Any = None) -> Any:
        return self._get_json(key, default)

    def set_value(self, key: str, value: Any) -> None:
        self._set_json(key, value)
