"""`RemotePipeline`: the pipeline's interface, with the work done by a Murmur server.

It offers what callers of `engine.pipeline.Pipeline` use — `load`, `prepare`, `plan`, `transcribe`,
`run` and `backend` (its `sample_rate` and `describe()`) — so the CLI, the app's worker and
re-transcribing a selection (`engine.retranscribe`) run it unchanged. Audio is decoded here at
16 kHz (what goes up, as FLAC); voice activity, chunking, decoding and speakers happen on the
server, so `prepare` finds no speech or chunks locally (`plan` keeps speech found elsewhere, with
no chunks). The transcript records the server's model and address (`Transcript.model`), or its
model alone for a server that is part of the caller (`local=True`: the app's own engine process,
whose address changes with each start).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from pathlib import Path

from engine.pipeline import Prepared, ProgressCallback, load_recording
from engine.remote.client import UPLOAD_RATE, RemoteClient
from engine.types import Recording, SpeechSegment, Transcript


@dataclasses.dataclass(slots=True)
class RemoteBackend:
    """What a caller may ask a pipeline's backend: its audio rate and a description."""

    url: str
    model: str = ""  # the server's model, once known
    name: str = "remote"
    sample_rate: int = UPLOAD_RATE
    labels_speakers: bool = True

    def describe(self) -> str:
        return f"{self.model or 'a Murmur server'} at {self.url}"


class RemotePipeline:
    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        fields: dict[str, str] | None = None,
        audio_stream: int | None = None,
        channel: str | int = "mix",
        local: bool = False,
    ) -> None:
        self.local = local
        self.client = RemoteClient(url, api_key)
        self.audio_stream = audio_stream  # which audio stream of a file goes up (None: its default)
        self.channel = channel  # which of its channels ("mix": their mean; engine.audio.channels)
        self.backend = RemoteBackend(self.client.url)
        self.fields = dict(fields or {})  # extra form fields, e.g. {"num_speakers": "2"}

    def run(
        self,
        source: str | Path | Recording,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Transcript:
        self.check_ready()
        return self.transcribe(self.prepare(source, on_progress, cancel), on_progress, cancel)

    def check_ready(self) -> None:
        """Raise `RemoteError` now when the server cannot be reached (before audio is encoded)."""
        self.client.health()

    def load(
        self,
        path: str | Path,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Recording:
        return load_recording(path, UPLOAD_RATE, self.audio_stream, on_progress, cancel, self.channel)

    def prepare(
        self,
        source: str | Path | Recording,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Prepared:
        recording = source if isinstance(source, Recording) else self.load(source, on_progress, cancel)
        return Prepared(recording, (), ())

    def plan(
        self, recording: Recording, speech: Sequence[SpeechSegment], pauses: Sequence[float] = ()
    ) -> Prepared:
        """`speech` found elsewhere (a live recording's detector) kept as it is; its chunks are the
        server's to plan."""
        return Prepared(recording, tuple(speech), ())

    def transcribe(
        self,
        prepared: Prepared,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Transcript:
        transcript = self.client.transcribe(prepared.recording, on_progress, cancel, self.fields)
        model = transcript.model or ""
        self.backend.model = model
        source = prepared.recording.source
        where = "" if self.local else f" at {self.client.url}"
        return dataclasses.replace(transcript, model=model + where, source=str(source) if source else None)
