"""Transcription settings: what the user chose, how it reaches the engine, how it is remembered.

`TranscribeSettings` is a frozen record of the dialog's fields (0 / "" mean "the backend's
default"); its field names are the names saved in settings and projects. Each field but the
backend and the run-on fields is a row of the engine's option table (`engine.options.option_rows()`:
label, tooltip, choices, which backends take it), under the same name except `SETTING_ROWS`'
three (a check box's row takes the flag's bare value: Known voices is a bare `--voices`).
`recipe(settings)` hands the values to `engine.recipe.recipe_from`, the one validation path the
command line also takes, so a mistake gets the same message in the dialog as on the command
line; `engine_arguments` is that recipe as `Pipeline.create` arguments. A run speaks to a
`murmur serve` (the app's own engine process, or a remote server): `engine_flags` are the flags
the engine process starts with, `request_fields` the form fields each request carries (the
rows a server takes per job, `engine.options.Option.form`); `per_request(name)` tells them apart.
`SettingsStore` keeps settings, recent files and export choices in a `QSettings` (as JSON
strings, so every type round-trips on every platform).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSettings

from engine.backends import BACKENDS
from engine.option_values import terms as parse_terms
from engine.options import LANGUAGES, Option, by_name
from engine.recipe import Recipe, recipe_from

if TYPE_CHECKING:
    from engine.pipeline import PipelineConfig

RECENT_LIMIT = 10
SETTING_ROWS = {"num_speakers": "speakers", "single_pass": "mode", "known_voices": "voices"}  # saved → row
# the dialog's lists where they differ from the flag's: any language code on the command line; no
# "server" decoder in the dialog, which has no field for that server's address
CHOICES = {"language": LANGUAGES, "engine": ("murmur", "hf")}
LIMITS = {  # the dialog's number ranges, and what 0 means
    "chunk_seconds": (3600, "backend default"), "batch_size": (512, "backend default"),
    "num_speakers": (64, "automatic"), "min_speakers": (64, "automatic"), "max_speakers": (64, "automatic"),
}  # fmt: skip
NOT_OPTIONS = ("backend", "run_on", "server_url", "server_key")
__all__ = ["SettingsStore", "TranscribeSettings", "engine_arguments", "engine_flags", "parse_terms", "recipe",
           "request_fields"]  # fmt: skip


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
    known_voices: bool = False  # name speakers from the voice library in the user's data folder
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
        for name in setting_names():
            row, value = option_row(name), getattr(self, name)
            choices = choices_of(name)
            if choices and not isinstance(value, bool) and value not in choices:
                raise ValueError(f"{row.label}: choose one of {', '.join(choices)}")
            if name in LIMITS and not 0 <= value <= LIMITS[name][0]:
                raise ValueError(f"{row.label} must be between 0 and {LIMITS[name][0]:g}")
        recipe(self)  # the engine's own checks: the same messages as on the command line

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

    def option_values(self) -> dict[str, Any]:
        """The values to hand the engine, by option-table name, for the settings' backend; a value
        that means "the backend's default" (0, "", no terms, single pass off) is left out."""
        values, rows = {}, by_name()  # the table is built on each call: once here, not per setting
        for name in setting_names():
            row, value = option_row(name, rows), getattr(self, name)
            if not row.applies_to(self.backend) or value in (0, "", (), False):
                continue
            values[row.name] = "single" if name == "single_pass" else row.bare if value is True else value
        return values


def setting_names() -> tuple[str, ...]:
    """The settings that are option-table rows, in the dialog's order."""
    return tuple(f.name for f in dataclasses.fields(TranscribeSettings) if f.name not in NOT_OPTIONS)


def option_row(name: str, rows: dict[str, Option] | None = None) -> Option:
    """The option-table row of setting `name` (from `rows`, `by_name()`'s table, when given)."""
    return (rows if rows is not None else by_name())[SETTING_ROWS.get(name, name)]


def choices_of(name: str) -> tuple[str, ...]:
    return CHOICES.get(name, option_row(name).choices)


def supported_options(backend: str) -> set[str]:
    """The settings backend `backend` takes (the rest are shown disabled)."""
    rows = by_name()
    return {name for name in setting_names() if option_row(name, rows).applies_to(backend)}


def recipe(settings: TranscribeSettings) -> Recipe:
    """The engine's `Recipe` for these settings (ValueError: what does not fit, as the CLI says it)."""
    return recipe_from(settings.option_values(), settings.backend)


def engine_arguments(settings: TranscribeSettings) -> tuple[str, PipelineConfig, dict[str, Any]]:
    """`(backend, PipelineConfig, backend config fields)` for `Pipeline.create`; defaults left out."""
    chosen = recipe(settings)
    return chosen.backend, chosen.pipeline, chosen.backend_options()


def engine_flags(settings: TranscribeSettings) -> list[str]:
    """The `murmur serve` flags of the settings a server holds for all its jobs (model, device…)."""
    from engine.cli.option_args import option_flags

    return option_flags(settings.option_values(), "serve", settings.backend)


def request_fields(settings: TranscribeSettings) -> dict[str, str]:
    """The form fields of one request: the settings a server takes per job (language, speakers…)."""
    from engine.options import request_fields as fields

    return fields(settings.option_values(), settings.backend)


def per_request(name: str) -> bool:
    """Whether setting `name` travels with each request (else a server holds it from its start)."""
    return bool(option_row(name).form)


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
