"""Field-by-field checks of a project file's parsed JSON (see `app.project`): each function
returns the field's value or raises TypeError/ValueError naming the field, so a project is
validated completely before any of it is used.
"""

from __future__ import annotations

import re
from typing import Any

from app.speakers import SpeakerBook, SpeakerInfo, free_color

_COLOR = re.compile(r"#[0-9A-Fa-f]{6}")


def typed(obj: dict, key: str, kind: type, default: Any = ...) -> Any:
    if key not in obj or obj[key] is None:
        if default is ...:
            raise ValueError(f"{key}: missing")
        return default
    if not isinstance(obj[key], kind) or isinstance(obj[key], bool):
        raise TypeError(f"{key}: expected {kind.__name__}, found {type(obj[key]).__name__}")
    return obj[key]


def number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{where}: expected a number, found {type(value).__name__}")
    return float(value)


def pair(value: Any, where: str) -> tuple[float, float]:
    if not isinstance(value, list) or len(value) != 2:
        raise TypeError(f"{where}: expected [start, end]")
    return number(value[0], where), number(value[1], where)


def audio_fields(audio: Any) -> tuple[str, str | None, int | None, float, int | None] | None:
    """(path, relative, size, duration, stream) of the project's audio reference."""
    if audio is None:
        return None
    if not isinstance(audio, dict):
        raise TypeError(f"audio: expected an object, found {type(audio).__name__}")
    relative, size = audio.get("relative"), audio.get("size")
    if relative is not None and not isinstance(relative, str):
        raise TypeError("audio.relative: expected a path")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int)):
        raise TypeError("audio.size: expected a whole number of bytes")
    stream = audio.get("stream")
    if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int) or stream < 0):
        raise TypeError("audio.stream: expected an audio stream number from 0")
    path = typed(audio, "path", str)
    return path, relative, size, number(audio.get("duration", 0.0), "audio.duration"), stream


def speakers_from(items: list[Any]) -> SpeakerBook:
    book: SpeakerBook = ()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise TypeError(f"speakers[{i}]: expected an object")
        sid, name, color = (item.get(k) for k in ("id", "name", "color"))
        if not isinstance(sid, str) or not sid or not isinstance(name, str):
            raise TypeError(f"speakers[{i}]: needs a text id and name")
        valid = isinstance(color, str) and _COLOR.fullmatch(color) is not None
        book = (*book, SpeakerInfo(sid, name, color if valid else free_color(book)))
    return book


def settings_from(settings: Any) -> dict[str, Any]:
    """The saved settings, checked to be usable by `TranscribeSettings.from_dict` as they are."""
    from app.settings import TranscribeSettings

    if settings is None:
        return {}
    if not isinstance(settings, dict):
        raise TypeError(f"settings: expected an object, found {type(settings).__name__}")
    context = settings.get("context")
    if context is not None and not (isinstance(context, list) and all(isinstance(t, str) for t in context)):
        raise TypeError(f"settings.context: expected a list of terms, found {type(context).__name__}")
    try:
        TranscribeSettings.from_dict(settings)
    except Exception as exc:  # any failure here would otherwise surface halfway through opening
        raise ValueError(f"settings: {exc}") from exc
    return dict(settings)
