"""Known voices: a local library of named people's voice embeddings, and naming speakers from it.

- `VoiceLibrary` (`library.py`): the SQLite store; nothing is stored unless the user asks, and
  every entry can be listed, renamed, merged and deleted (embeddings included).
- `VoiceRecogniser` (`recogniser.py`): after diarization and stitching, compares each found
  speaker's own speech with the library and names it only on a clear match (`matching.py`).
- `create_recogniser(SpeakerConfig, diarizer)`: the recogniser `SpeakerConfig.voices` asks for
  (None when it is off); it shares the embedded diarizer's encoder when there is one.
- `library_path(value)`: the file a `voices` setting names (`DEFAULT_VOICES`: the user's data
  folder, `location.default_library_path`).
"""

from __future__ import annotations

from pathlib import Path

from engine.speakers import DEFAULT_VOICES, SpeakerConfig
from engine.speakers.diarization import Diarizer
from engine.speakers.embedding import SpeakerEncoder
from engine.voices.library import VoiceLibrary, VoiceLibraryError
from engine.voices.location import default_library_path
from engine.voices.matching import MatchConfig
from engine.voices.recogniser import VoiceEmbedder, VoiceRecogniser
from engine.voices.samples import EmbeddingModel, KnownVoice, VoiceSample

__all__ = [
    "EmbeddingModel",
    "KnownVoice",
    "MatchConfig",
    "VoiceEmbedder",
    "VoiceLibrary",
    "VoiceLibraryError",
    "VoiceRecogniser",
    "VoiceSample",
    "create_recogniser",
    "library_path",
]


def library_path(value: str | None) -> Path:
    """The library file a `voices` setting names (None or DEFAULT_VOICES: the default one)."""
    if value is None or value == DEFAULT_VOICES:
        return default_library_path()
    return Path(value).expanduser()


def create_recogniser(config: SpeakerConfig, diarizer: Diarizer | None = None) -> VoiceRecogniser | None:
    """The recogniser `config.voices` asks for, or None when naming known voices is off."""
    if config.voices is None:
        return None
    encoder = getattr(diarizer, "encoder", None)  # the embedded diarizer's: loaded once, shared
    embedder = VoiceEmbedder(encoder if isinstance(encoder, SpeakerEncoder) else None)
    return VoiceRecogniser(VoiceLibrary(library_path(config.voices)), embedder)
