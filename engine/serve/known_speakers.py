"""A request's known speakers: OpenAI's `known_speaker_names[]` and `known_speaker_references[]`.

Contract:
- `known_speakers(names, references)` → `KnownSpeakers`, or None when neither field was sent, or
  an `ApiError` 400 naming the field at fault: at most `MAX_SPEAKERS` pairs, as many names as
  references, each name one a voice library would take (`engine.voices.samples.check_name`) and
  used once, each reference a `data:` URL holding base64 audio in any format `file` takes that
  decodes to `MIN_SECONDS`–`MAX_SECONDS` of sound (OpenAI's 2–10 s). Decoding goes through a
  temporary file that is deleted at once.
- `ReferenceVoices(known, embedder)` offers the references to `VoiceRecogniser` as a one-request
  voice library (`VoiceSource`): each clip is embedded once, by the same encoder and matched by
  the same rule (`engine.voices.matching`: a clear match, with a margin over the second best) as
  the user's own library, so a speaker is named only when it clearly is that reference's voice.
- `reference_recogniser(known, diarizer)`: that recogniser, sharing the diarizer's encoder; it
  stands in for the server's own library (`--voices`) for that request.
- `refusal(known, fmt, diarize, diarizer)`: the 400 for a request that asks for speakers the
  server will not find (diarization off), or None.
"""

from __future__ import annotations

import base64
import binascii
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.audio.io import load_audio
from engine.errors import AudioDecodeError
from engine.serve.openai_errors import ApiError, bad_parameter
from engine.serve.upload import MAX_CLIPS
from engine.speakers.diarization import Diarizer
from engine.speakers.embedding import SAMPLE_RATE, SpeakerEncoder
from engine.types import Recording
from engine.voices.recogniser import VoiceEmbedder, VoiceRecogniser
from engine.voices.samples import KnownVoice, VoiceSample, check_name

NAMES, REFERENCES = "known_speaker_names", "known_speaker_references"
MAX_SPEAKERS = MAX_CLIPS  # OpenAI's four; the upload already stops a fifth clip as it arrives
MIN_SECONDS, MAX_SECONDS = 2.0, 10.0
SUFFIXES = {"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/flac": ".flac",
            "audio/x-flac": ".flac", "audio/mpeg": ".mp3", "audio/mp3": ".mp3", "audio/ogg": ".ogg",
            "audio/webm": ".webm", "audio/mp4": ".m4a", "audio/m4a": ".m4a",
            "audio/x-m4a": ".m4a"}  # fmt: skip; anything else is left to the decoder to recognise


@dataclass(frozen=True, slots=True, eq=False)
class KnownSpeakers:
    """The people a client named, each with a short clip of their voice (mono, encoder rate)."""

    names: tuple[str, ...]
    clips: tuple[Recording, ...]


def known_speakers(names: list[str], references: list[str]) -> KnownSpeakers | None:
    """The request's known speakers, checked (see the module contract)."""
    if not names and not references:
        return None
    if len(references) > MAX_SPEAKERS:
        message = f"{REFERENCES} takes at most {MAX_SPEAKERS} clips, got {len(references)}"
        raise bad_parameter(REFERENCES, message)
    if len(names) != len(references):
        raise bad_parameter(NAMES, f"give one name per reference: {len(names)} {NAMES} for "
                                   f"{len(references)} {REFERENCES}")  # fmt: skip
    checked = tuple(_name(n, i) for i, n in enumerate(names))
    if len({n.casefold() for n in checked}) < len(checked):
        raise bad_parameter(NAMES, f"each of {NAMES} must be different")
    return KnownSpeakers(checked, tuple(_clip(r, i) for i, r in enumerate(references)))


def _name(name: str, index: int) -> str:
    try:
        return check_name(name)
    except ValueError as exc:
        raise bad_parameter(NAMES, f"{NAMES}[{index}]: {exc}") from None


def _clip(url: str, index: int) -> Recording:
    where = f"{REFERENCES}[{index}]"
    head, comma, data = url.partition(",")
    if not comma or not head.startswith("data:") or not head.endswith(";base64"):
        raise bad_parameter(REFERENCES, f"{where} must be a data URL with base64 audio "
                                        "(data:audio/wav;base64,...)")  # fmt: skip
    try:
        audio = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise bad_parameter(REFERENCES, f"{where} is not valid base64") from None
    mime = head.removeprefix("data:").removesuffix(";base64").split(";")[0].strip().lower()
    clip = _decode(audio, SUFFIXES.get(mime, ""), where)
    if not MIN_SECONDS <= clip.duration <= MAX_SECONDS:
        message = f"{where} is {clip.duration:.2f} s long; a reference is {MIN_SECONDS:g}–{MAX_SECONDS:g} s"
        raise bad_parameter(REFERENCES, message)
    return clip


def _decode(audio: bytes, suffix: str, where: str) -> Recording:
    handle, name = tempfile.mkstemp(prefix="reference-", suffix=suffix)
    path = Path(name)
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(audio)
        recording = load_audio(path, SAMPLE_RATE)
    except AudioDecodeError:
        raise bad_parameter(REFERENCES, f"{where} could not be decoded as audio") from None
    finally:
        path.unlink(missing_ok=True)
    return Recording(recording.samples, recording.sample_rate, source=None)


class ReferenceVoices:
    """A request's references as a voice library: one sample each, embedded on first use."""

    path = Path("known_speaker_references")  # what the recogniser's messages call it

    def __init__(self, known: KnownSpeakers, embedder: VoiceEmbedder) -> None:
        self.known, self.embedder = known, embedder
        self._voices: list[KnownVoice] | None = None

    def exists(self) -> bool:
        return True

    def voices(self) -> list[KnownVoice]:
        if self._voices is None:
            self.embedder.load()
            vectors = [self.embedder.embed(c, [[(0.0, c.duration)]])[0] for c in self.known.clips]
            model = self.embedder.model
            self._voices = [KnownVoice(n, (VoiceSample(v, model),)) for n, v in
                            zip(self.known.names, vectors, strict=True) if v is not None]  # fmt: skip
        return self._voices


def reference_recogniser(known: KnownSpeakers, diarizer: Diarizer | None) -> VoiceRecogniser:
    encoder = getattr(diarizer, "encoder", None)  # the embedded diarizer's: loaded once, shared
    embedder = VoiceEmbedder(encoder if isinstance(encoder, SpeakerEncoder) else None)
    return VoiceRecogniser(ReferenceVoices(known, embedder), embedder)


def refusal(known: KnownSpeakers | None, fmt: str, diarize: bool | None, diarizer: str) -> ApiError | None:
    """A 400 for speakers asked of a request (or server) that finds none, else None."""
    off = diarize is False or (diarize is None and diarizer == "none")
    if not off:
        return None
    if known is not None:
        return bad_parameter(REFERENCES, f"{REFERENCES} needs diarization, which is off for this request")
    if fmt == "diarized_json":
        return bad_parameter("response_format", f"{fmt} needs diarization, which is off for this request")
    return None
