"""Which audio stream of a file to open: asked when the file has several.

`choose_stream(parent, path)` returns `(True, None)` for a file with one audio stream (or one the
engine will refuse with its own message when it decodes it), `(True, i)` for the stream the user
picked among several (the default one preselected, every stream named as the engine lists them),
and `(False, None)` when the user cancelled the question (nothing is opened)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QInputDialog, QWidget

from engine.audio.io import audio_streams
from engine.errors import AudioDecodeError

TITLE = "Choose the audio stream"


def choose_stream(parent: QWidget | None, path: Path) -> tuple[bool, int | None]:
    try:
        labels, default = audio_streams(path)
    except AudioDecodeError:
        return True, None  # decoding reports it
    if len(labels) < 2:
        return True, None
    question = f"'{path.name}' has {len(labels)} audio streams. Which one should be transcribed?"
    label, ok = QInputDialog.getItem(parent, TITLE, question, list(labels), default, False)
    if not ok:
        return False, None
    return True, labels.index(label)
