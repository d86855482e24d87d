"""The form fields of `/v1/audio/transcriptions` and `/v1/audio/translations`, read and checked.

`transcription_request(fields)` / `translation_request(fields)` → an `AudioRequest`, or an
`ApiError` 400 naming the field (`param`). OpenAI's fields: `model` (any name: this server runs
one model), `language`, `prompt`, `temperature` (0–1), `response_format`,
`timestamp_granularities[]` (only with verbose_json, as OpenAI), `stream`, `chunking_strategy`
("auto" only: Murmur always cuts at voice activity). Murmur's own: `diarize`, `diarizer` (embedded,
pyannote or none), `num_speakers`, `min_speakers`, `max_speakers` (1–32; a number of speakers
overrides the bounds), `speaker_labels` (names in SRT/VTT cues) and `murmur_progress` (Murmur's
`murmur.*` events in the stream). The speaker fields are the option table's rows with that `form`
(`engine.options`), so the app sends the same names it saves. `known_speaker_names[]` +
`known_speaker_references[]` name the speakers whose voices match the clips
(`engine.serve.known_speakers`). Any other field — `include[]`, a typo — is refused, never
ignored. Translations take no `language`, `stream`, granularities, known speakers or
`diarized_json`, as OpenAI's endpoint.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from engine.serve.formats import DIARIZED, FORMATS, GRANULARITIES
from engine.serve.jobs import MAX_SPEAKERS, JobOptions
from engine.serve.known_speakers import NAMES, REFERENCES, known_speakers
from engine.serve.openai_errors import bad_parameter
from engine.speakers import DIARIZER_CHOICES
from engine.types import DecodeChoices

SPEAKER_COUNTS = ("num_speakers", "min_speakers", "max_speakers")
COMMON = ("file", "model", "prompt", "response_format", "temperature", "diarize", "diarizer", *SPEAKER_COUNTS,
          "speaker_labels")  # fmt: skip
TRANSCRIBE_ONLY = ("language", "stream", "timestamp_granularities", "chunking_strategy", "murmur_progress",
                   NAMES, REFERENCES)  # fmt: skip
UNSUPPORTED = {"include": "log probabilities are not offered by this server",
               "keywords": "give names and terms in `prompt`",
               "languages": "give one `language`"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class AudioRequest:
    """What a client asked: the answer's shape, and the job's options."""

    fmt: str = "json"
    granularities: tuple[str, ...] = ()
    stream: bool = False
    progress: bool = False  # Murmur's own events in the stream
    speaker_labels: bool = False  # speaker names in SRT/VTT cues
    options: JobOptions = field(default_factory=JobOptions)


def transcription_request(fields: dict[str, list[str]]) -> AudioRequest:
    _check_names(fields, (*COMMON, *TRANSCRIBE_ONLY))
    fmt = _format(fields)
    granularities = tuple(_all(fields, "timestamp_granularities"))
    if any(g not in GRANULARITIES for g in granularities):
        message = "timestamp_granularities may hold 'segment' and 'word'"
        raise bad_parameter("timestamp_granularities", message)
    if granularities and fmt != "verbose_json":
        raise bad_parameter("timestamp_granularities",
                            "timestamp_granularities requires response_format verbose_json")  # fmt: skip
    strategy = _one(fields, "chunking_strategy")
    if strategy not in (None, "", "auto"):
        raise bad_parameter("chunking_strategy", "chunking_strategy may only be 'auto' (voice activity)",
                            "unsupported_value")  # fmt: skip
    decoding = _decoding(fields, _one(fields, "language"), "transcribe")
    known = known_speakers(_all(fields, NAMES), _all(fields, REFERENCES))
    return AudioRequest(
        fmt=fmt, granularities=granularities, stream=bool(_flag(fields, "stream")),
        progress=bool(_flag(fields, "murmur_progress")), speaker_labels=bool(_flag(fields, "speaker_labels")),
        options=dataclasses.replace(_options(fields, decoding), known_speakers=known),
    )  # fmt: skip


def translation_request(fields: dict[str, list[str]]) -> AudioRequest:
    _check_names(fields, COMMON)
    if _one(fields, "response_format") == DIARIZED:
        raise bad_parameter("response_format", "translations have no diarized_json", "unsupported_value")
    decoding = _decoding(fields, None, "translate")
    return AudioRequest(fmt=_format(fields), speaker_labels=bool(_flag(fields, "speaker_labels")),
                        options=_options(fields, decoding))  # fmt: skip


def _check_names(fields: dict[str, list[str]], known: tuple[str, ...]) -> None:
    for name in fields:
        bare = name.removesuffix("[]")
        if bare in UNSUPPORTED:
            message = f"{bare} is not supported: {UNSUPPORTED[bare]}"
            raise bad_parameter(bare, message, "unsupported_parameter")
        if bare not in known:
            raise bad_parameter(bare, f"Unrecognized request argument supplied: {bare}", "unknown_parameter")


def _format(fields: dict[str, list[str]]) -> str:
    fmt = _one(fields, "response_format") or "json"
    if fmt not in FORMATS:
        raise bad_parameter("response_format", f"response_format must be one of {', '.join(FORMATS)}",
                            "unsupported_value")  # fmt: skip
    return fmt


def _decoding(fields: dict[str, list[str]], language: str | None, task: str) -> DecodeChoices:
    text = _one(fields, "temperature")
    try:
        temperature = None if text in (None, "") else float(text)
    except ValueError:
        raise bad_parameter("temperature", f"temperature must be a number, not {text[:20]!r}") from None
    if temperature is not None and not 0.0 <= temperature <= 1.0:  # also NaN
        raise bad_parameter("temperature", "temperature must be between 0 and 1")
    prompt = _one(fields, "prompt")
    return DecodeChoices(language=language or None, prompt=prompt or None, temperature=temperature, task=task)


def _options(fields: dict[str, list[str]], decoding: DecodeChoices) -> JobOptions:
    counts = {name: _count(fields, name) for name in SPEAKER_COUNTS}
    diarize, diarizer = _flag(fields, "diarize"), _one(fields, "diarizer") or None
    if diarizer is not None and diarizer not in DIARIZER_CHOICES:
        message = f"diarizer must be one of {', '.join(DIARIZER_CHOICES)}"
        raise bad_parameter("diarizer", message, "unsupported_value")
    if diarize is False and diarizer not in (None, "none"):
        raise bad_parameter("diarizer", f"diarize=false finds no speakers: it cannot use diarizer={diarizer}")
    low, high = counts["min_speakers"], counts["max_speakers"]
    if low is not None and high is not None and low > high:
        raise bad_parameter("min_speakers", "min_speakers must not be more than max_speakers")
    return JobOptions(diarize=diarize, diarizer=diarizer, decoding=decoding, **counts)


def _count(fields: dict[str, list[str]], name: str) -> int | None:
    """A number of speakers, 1 to 32 (None: not given)."""
    text = _one(fields, name)
    if text in (None, ""):
        return None
    if not text.isdigit():
        raise bad_parameter(name, f"{name} must be a whole number")
    if not 1 <= int(text) <= MAX_SPEAKERS:
        raise bad_parameter(name, f"{name} must be between 1 and {MAX_SPEAKERS}")
    return int(text)


def _one(fields: dict[str, list[str]], name: str) -> str | None:
    values = _all(fields, name)
    return values[-1] if values else None


def _all(fields: dict[str, list[str]], name: str) -> list[str]:
    return [*fields.get(name, []), *fields.get(f"{name}[]", [])]


def _flag(fields: dict[str, list[str]], name: str) -> bool | None:
    value = _one(fields, name)
    if value is None or value == "":
        return None
    if value.lower() in ("true", "1", "yes"):
        return True
    if value.lower() in ("false", "0", "no"):
        return False
    raise bad_parameter(name, f"{name} must be true or false, not {value[:20]!r}")

