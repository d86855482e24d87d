"""A request's decode choices on the server's backend: honoured, or refused naming the parameter.

`job_backend(backend, choices)` is the backend one job decodes with: the server's own when the
request chose nothing, else a variant around the same loaded model carrying the job's
`DecodeChoices`. Each backend says what it can do (`ADAPTERS`, by backend name):

- whisper: `language` is forced on the decoder (an English-only `.en` model refuses any other);
  `prompt` is whisper's initial prompt; `temperature` > 0 samples from it up (the sequential
  decoder's fallback; the batched one is greedy); `task="translate"` needs a multilingual model.
- VibeVoice-ASR: `prompt` becomes the chunk prompt's context ("with extra info: …"); it finds
  the language itself and decodes greedily, so `language` and a `temperature` above 0 are refused,
  and it cannot translate.

A refusal is `Refused(param, message)`, a `ValueError` the server answers with 400.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

from engine.backends.whisper import english_only, language_setting
from engine.types import DecodeChoices

NOTHING = DecodeChoices()


class Refused(ValueError):
    """The backend cannot do what the request asked; `param` names the request's field."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param


def job_backend(backend: Any, choices: DecodeChoices) -> Any:
    """The backend a job with `choices` decodes with (raises `Refused`)."""
    if choices == NOTHING:
        return backend
    adapt = ADAPTERS.get(backend.name)
    if adapt is None:
        raise Refused("model", f"the {backend.name} backend takes no per-request decode options")
    return adapt(backend, choices)


def _whisper(backend: Any, choices: DecodeChoices) -> Any:
    model = backend.config.model
    translate = choices.task == "translate"
    if translate and english_only(model):
        raise Refused("model", f"the model {model} is English-only and cannot translate; "
                               "the server needs a multilingual whisper model for translations")  # fmt: skip
    changes: dict[str, Any] = {"task": choices.task}
    if choices.language is not None:
        try:
            changes["language"] = language_setting(choices.language, model)
        except ValueError as exc:
            raise Refused("language", str(exc)) from exc
        if english_only(model) and changes["language"] != "en":
            raise Refused("language", f"the model {model} is English-only: it cannot transcribe "
                                      f"{choices.language!r}")  # fmt: skip
    elif translate:
        changes["language"] = "auto"  # the speech's own language, found by the model
    if choices.prompt is not None:
        changes["prompt"] = choices.prompt
    if choices.temperature is not None:
        changes["temperature"] = choices.temperature
    try:
        return backend.variant(**changes)
    except ValueError as exc:
        raise Refused("model", str(exc)) from exc


def _vibevoice(backend: Any, choices: DecodeChoices) -> Any:
    if choices.task == "translate":
        raise Refused("model", "VibeVoice-ASR transcribes in the language spoken; it cannot translate")
    if choices.language is not None:
        raise Refused("language", "VibeVoice-ASR finds the language itself; it cannot be told one")
    if choices.temperature:
        raise Refused("temperature", "VibeVoice-ASR decodes greedily here; only temperature 0 is offered")
    if not choices.prompt:
        return backend
    inner = getattr(backend, "backend", backend)  # a SharedBackend wraps the VibeVoice backend
    variant = copy.copy(inner)  # the same loaded model; only its settings differ
    variant.config = dataclasses.replace(inner.config, context=(choices.prompt,))
    if inner is backend:
        return variant
    shared = copy.copy(backend)  # the same shared batch and job numbering
    shared.backend = variant
    return shared


ADAPTERS: dict[str, Callable[[Any, DecodeChoices], Any]] = {"whisper": _whisper, "vibevoice": _vibevoice}
