"""The GUI side of one live recording: an `engine.live.LiveSession` whose news arrives as Qt signals.

`RecordingController.start(source, path, connect)` starts the session: the capture to FLAC and
the speech regions stay in this process, beside the audio device; the live lines come from the
engine (`app.recording.live_link.LiveLink`: the audio goes to the app's engine process or a
Murmur server as it is captured; `connect` returns its address and key), so no model decodes in
the window's interpreter. Callbacks run on other threads and are re-emitted as signals, so slots
run on the GUI thread: `line(LiveLine)`, `segment(SpeechSegment)`, `named(speaker, name, score)`
(a known voice recognised in a live speaker; None when no longer), `failed(message)` (the device
stopped or the disk filled: the file keeps what was recorded; or live lines stopped: the
recording goes on), and, every `TICK_MS`, `status(LiveStatus)` (the engine's lag and lines).
For the growing waveform the audio is kept as a display signal (`display()`): the minimum and
maximum of every `DISPLAY_BLOCK` samples, interleaved, at `DISPLAY_RATE` values a second — the
same envelope at 1/16 of the memory (about 14 MB an hour); the full audio is on disk.
`stop()` ends the capture at once and emits `stopped(path)` (also emitted when the source ends
by itself: a failure, or a file played to its end), after which `speech()` is the recording's
speech; the engine's live lines then catch up and `caught_up()` is emitted when the last one is
in. No torch or whisper is imported here.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from app.background import step_back
from app.recording.display_signal import DisplaySignal
from app.recording.live_link import Connect, LiveLink
from engine.errors import RecordingError
from engine.types import SpeechSegment

TICK_MS = 100
DISPLAY_BLOCK = 32  # 16 kHz samples per (min, max) pair of the display signal: 1000 values a second
DISPLAY_RATE = 16000 * 2 // DISPLAY_BLOCK


class RecordingController(QObject):
    line = Signal(object)  # engine.live.transcriber.LiveLine
    segment = Signal(object)  # engine.types.SpeechSegment
    status = Signal(object)  # engine.live.session.LiveStatus
    failed = Signal(str)
    stopped = Signal(Path)
    caught_up = Signal()
    named = Signal(str, object, object)  # live speaker, known voice's name or None, score or None

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session: Any = None
        self.link: LiveLink | None = None
        self._display = DisplaySignal()
        self._rest: np.ndarray  # the samples short of a whole display block; `start` empties it
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._catching_up = False
        self._stopped = True
        self._closed: threading.Event  # made by `start`; set once the device and file are closed
        self.path: Path | None = None

    @property
    def active(self) -> bool:
        """Recording now (not after `stop`, even while its device and file are being closed)."""
        return self.session is not None and not self._stopped and not self.session.capture.ended.is_set()

    @property
    def busy(self) -> bool:
        """Recording, or live lines still catching up after the stop."""
        return self.active or self._catching_up

    def start(self, source: Any, path: Path, connect: Connect | None = None, speakers: bool = True,
              language: str | None = None) -> None:  # fmt: skip
        """Start recording `source` into `path` (raises `RecordingError` if it will not open), with
        live lines from the engine `connect` reaches (None: recording only)."""
        from engine.live.session import LiveSession

        self._display.clear()
        self._rest = np.zeros(0, np.float32)
        self.path = path
        link = (
            None
            if connect is None
            else LiveLink(connect, self.line.emit, self._on_link_error, speakers, language, self.named.emit)
        )
        # no backend: no model decodes in this process, the lines come through the link
        session = LiveSession(source, path, on_segment=self.segment.emit, on_error=self._on_error,
                              on_audio=self._on_audio)  # fmt: skip
        session.start()
        self._stopped, self._closed = False, threading.Event()  # before `session`: `shutdown` reads both
        self.session, self.link = session, link
        if link is not None:
            link.start()
        self.status.emit(self._status())  # at once: "loading models" shows before the first tick
        self._timer.start()

    def pause(self) -> None:
        if self.session is not None:
            self.session.pause()

    def resume(self) -> None:
        if self.session is not None:
            self.session.resume()

    def stop(self) -> Path | None:
        """End the recording now. Its device is closed and its file finished on a thread of their own
        (an input device waits for its buffers as it stops: 0.1 s of a frozen window), then `stopped`
        says the file is complete, then the live lines catch up."""
        session = self.session
        if session is None or self._stopped:
            return None
        self._stopped = True
        self._catching_up = True
        args = (session, self._closed)
        threading.Thread(target=self._close, args=args, daemon=True, name="live-stop").start()
        return self.path

    def speech(self) -> tuple[SpeechSegment, ...] | None:
        """The speech the recording's detector found, whole once `stopped` was said (the file opens
        without looking for it again); None when its live path failed before the end."""
        session = self.session
        return tuple(session.segments) if session is not None and session.segments_whole else None

    def display(self) -> np.ndarray:
        """The display signal of everything recorded so far (N,) float32, at `DISPLAY_RATE` (a view:
        later values are added past its end)."""
        return self._display.view()

    def shutdown(self) -> None:
        """Stop (closing the window): the file is complete, no line is asked for any more."""
        if self.session is not None and self._stopped:
            self._closed.wait()  # a stop in progress finishes the file before the window goes
        elif self.session is not None:
            self.session.stop()
        if self.link is not None:
            self.link.close()
        self._timer.stop()

    def _close(self, session: Any, closed: threading.Event) -> None:
        step_back()
        path = self.path
        try:
            path = session.stop()
        except Exception as exc:  # said; the window still leaves the recording state
            self.failed.emit(f"The recording could not be closed: {exc}")
        finally:
            closed.set()
        self.stopped.emit(path)
        self._catch_up(session)

    def _catch_up(self, session: Any) -> None:
        session.finish(timeout=None)
        if self.link is not None:
            self.link.finish(timeout=None)
        self._catching_up = False
        self.caught_up.emit()

    def _status(self) -> Any:
        status, link = self.session.status(), self.link
        if link is None:
            return status
        return replace(
            status, behind_seconds=link.behind_seconds(), lines=link.lines, loading=link.connecting
        )

    def _tick(self) -> None:
        if self.session is None:
            return
        self.status.emit(self._status())
        if self.active and self.link is not None:
            self.link.lost()  # the engine went away while recording: said once, the recording goes on
        if self.session.capture.ended.is_set() and not self._stopped:
            self.stop()  # the source ended by itself (a file played to its end, or a failure)
        if not self.busy:
            self._timer.stop()

    def _on_audio(self, samples: np.ndarray) -> None:
        pending = np.concatenate((self._rest, samples))
        whole = len(pending) // DISPLAY_BLOCK * DISPLAY_BLOCK
        blocks = pending[:whole].reshape(-1, DISPLAY_BLOCK)  # (n, DISPLAY_BLOCK)
        pairs = np.stack((blocks.min(axis=1), blocks.max(axis=1)), axis=1).reshape(-1)  # (2n,)
        self._rest = pending[whole:]
        self._display.append(pairs)
        if self.link is not None:
            self.link.send(samples)

    def _on_error(self, exc: Exception) -> None:
        if isinstance(exc, RecordingError):
            self.failed.emit(f"{exc}\n\nEverything recorded until then is kept in {self.path}.")
        else:
            self.failed.emit(f"Live transcription: {exc}\n\nThe recording goes on.")

    def _on_link_error(self, message: str) -> None:
        self.failed.emit(f"Live transcription: {message}\n\nThe recording goes on.")
