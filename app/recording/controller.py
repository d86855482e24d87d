"""The GUI side of one live recording: an `engine.live.LiveSession` whose news arrives as Qt signals.

`RecordingController.start(source, path, backend)` starts the session; the engine's callbacks
run on its threads and are re-emitted as signals, so slots run on the GUI thread:
`line(LiveLine)`, `segment(SpeechSegment)`, `failed(message)` (the device stopped or the disk
filled; the file keeps what was recorded), and, every `TICK_MS`, `status(LiveStatus)`.
For the growing waveform the audio is kept as a display signal (`display()`): the minimum and
maximum of every `DISPLAY_BLOCK` samples, interleaved, at `DISPLAY_RATE` values a second — the
same envelope at 1/16 of the memory (about 14 MB an hour); the full audio is on disk.
`stop()` ends the capture at once and emits `stopped(path)` (also emitted when the source ends
by itself: a failure, or a file played to its end); the live lines then catch up on the worker
and `caught_up()` is emitted when the last one is in. No torch is imported here.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from engine.errors import RecordingError

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

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session: Any = None
        self._audio: list[np.ndarray] = []  # display signal pieces
        self._rest = np.zeros(0, np.float32)
        self._lock = threading.Lock()
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._catching_up = False
        self._stopped = True
        self.path: Path | None = None

    @property
    def active(self) -> bool:
        """Recording now (not after `stop`)."""
        return self.session is not None and not self.session.capture.ended.is_set()

    @property
    def busy(self) -> bool:
        """Recording, or live lines still catching up after the stop."""
        return self.active or self._catching_up

    def start(self, source: Any, path: Path, backend: Any = None, speakers: bool = True) -> None:
        """Start recording `source` into `path` (raises `RecordingError` if it will not open)."""
        from engine.live.session import LiveConfig, LiveSession

        with self._lock:
            self._audio = []
        self._rest = np.zeros(0, np.float32)
        self.path = path
        session = LiveSession(
            source, path, backend, LiveConfig(speakers=speakers), on_line=self.line.emit,
            on_segment=self.segment.emit, on_error=self._on_error, on_audio=self._on_audio,
        )  # fmt: skip
        session.start()
        self.session = session
        self._stopped = False
        self.status.emit(session.status())  # at once: "loading models" shows before the first tick
        self._timer.start()

    def pause(self) -> None:
        if self.session is not None:
            self.session.pause()

    def resume(self) -> None:
        if self.session is not None:
            self.session.resume()

    def stop(self) -> Path | None:
        """End the recording now; the live lines catch up in the background."""
        session = self.session
        if session is None or self._stopped:
            return None
        path = session.stop()
        self._stopped = True
        self._catching_up = True
        threading.Thread(target=self._catch_up, args=(session,), daemon=True, name="live-catch-up").start()
        self.stopped.emit(path)
        return path

    def display(self) -> np.ndarray:
        """The display signal of everything recorded so far (N,) float32, at `DISPLAY_RATE`."""
        with self._lock:
            if len(self._audio) > 1:
                self._audio = [np.concatenate(self._audio)]
            return self._audio[0] if self._audio else np.zeros(0, np.float32)

    def shutdown(self) -> None:
        """Stop and wait (closing the window): the file is complete, no line is decoded any more."""
        if self.session is not None:
            self.session.stop()
            if self.session.transcriber is not None:
                self.session.transcriber.close(wait=False)
        self._timer.stop()

    def _catch_up(self, session: Any) -> None:
        session.finish(timeout=None)
        self._catching_up = False
        self.caught_up.emit()

    def _tick(self) -> None:
        if self.session is None:
            return
        self.status.emit(self.session.status())
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
        with self._lock:
            self._audio.append(pairs)

    def _on_error(self, exc: Exception) -> None:
        if isinstance(exc, RecordingError):
            self.failed.emit(f"{exc}\n\nEverything recorded until then is kept in {self.path}.")
        else:
            self.failed.emit(f"Live transcription: {exc}\n\nThe recording goes on.")
