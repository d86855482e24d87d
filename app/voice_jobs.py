"""Remembering voices off the GUI thread: reading a speaker's audio and running the speaker encoder
take seconds, and the window keeps answering meanwhile.

`VoiceJobs.submit(request)` runs `app.known_voices.remember` for a `RememberRequest` on one worker
thread, requests one at a time in the order submitted; `finished(Remembered)` then comes on the
GUI thread, carrying the request it answers (so the result goes to the speaker that was asked
about, whatever is selected by then) and the number of samples stored, or the error that stored
nothing. A request holds only immutable data taken on the GUI thread (the transcript's snapshot,
the open recording, the library), so the user may keep editing, and even open another recording.
The speaker encoder is loaded on the worker thread the first time it is needed, never on import.
`shutdown()` (the window closing) waits until every submitted voice is stored, delivers nothing
more and ends the thread: closing the window loses no voice the user asked to remember.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from app.background import step_back
from app.known_voices import remember
from engine.types import Recording, Transcript
from engine.voices import VoiceEmbedder, VoiceLibrary


@dataclass(frozen=True, slots=True)
class RememberRequest:
    """Remember `speaker_id`'s voice (then called `label`, in the window's `document`-th
    transcript) under `name`."""

    speaker_id: str
    label: str
    name: str
    transcript: Transcript
    recording: Recording
    library: VoiceLibrary
    document: int = 0


@dataclass(frozen=True, slots=True)
class Remembered:
    request: RememberRequest
    added: int = 0  # samples stored
    error: str | None = None  # why nothing was stored


class VoiceJobs(QObject):
    finished = Signal(object)  # a Remembered, on the GUI thread
    _done = Signal(int, object)  # job number, Remembered (emitted on the worker thread)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="murmur-voice", initializer=step_back)
        self._pending: dict[int, Future[Remembered]] = {}
        self._next = 0
        self._embedder: VoiceEmbedder | None = None  # touched only on the worker thread
        self._done.connect(self._deliver)  # queued: the signal comes from the worker thread

    @property
    def busy(self) -> bool:
        return bool(self._pending)

    def submit(self, request: RememberRequest) -> None:
        job, self._next = self._next, self._next + 1
        self._pending[job] = self._pool.submit(self._run, job, request)

    def _run(self, job: int, request: RememberRequest) -> Remembered:
        try:
            self._embedder = self._embedder or VoiceEmbedder()
            added = remember(request.library, request.transcript, request.speaker_id, request.recording,
                             request.name, self._embedder)  # fmt: skip
            result = Remembered(request, added)
        except Exception as exc:  # any failure is a message for the user, never a job lost
            result = Remembered(request, error=str(exc) or type(exc).__name__)
        self._done.emit(job, result)
        return result

    def _deliver(self, job: int, result: Remembered) -> None:
        if self._pending.pop(job, None) is not None:
            self.finished.emit(result)

    def shutdown(self) -> None:
        """Store every submitted voice, deliver nothing more, end the worker thread."""
        pending, self._pending = self._pending, {}
        for future in pending.values():
            future.result()
        self._pool.shutdown(wait=True)
