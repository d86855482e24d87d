"""The GUI side of one live recording: an `engine.live.LiveSession` whose news arrives as Qt signals.

`RecordingController.start(source, path, connect)` starts the session: the capture to FLAC and
the speech regions stay in this process, beside the audio device; the live lines come from the
engine (`app.recording.live_link.LiveLink`: the audio goes to the app's engine process or a
Murmur server as it is captured; `connect` returns its address and key), so no model decodes in
the window's interpreter. Callbacks run on other threads and are re-emitted as signals, so slots
run on the GUI thread: `opened()` (the device and file are open: the recording has begun) or
`refused(message)` (they would not open: nothing was recorded and no file is left),
`line(LiveLine)`, `segment(SpeechSegment)`, `named(speaker, name, score)`
(a known voice recognised in a live speaker; None when no longer), `failed(message)` (the device
stopped or the disk filled: the file keeps what was recorded; or live lines stopped: the
recording goes on), and, every `TICK_MS`, `status(LiveStatus)` (the engine's lag and lines).
For the growing waveform the audio is kept as a display signal (`display()`): the minimum and
maximum of every `DISPLAY_BLOCK` samples, interleaved, at `DISPLAY_RATE` values a second — the
same envelope at 1/16 of the memory (about 14 MB an hour); the full audio is on disk.
`start` returns at once: the device opens on a thread of its own, as it closes on one at `stop`
(PortAudio's open and start hold the caller 6–10 ms through PulseAudio here, more where the sound
server must first switch a headset's profile; none of it is the window's).
`stop()` ends the capture at once and emits `stopped(path)` (also emitted when the source ends
by itself: a failure, or a file played to its end), after which `speech()` is the recording's
speech; the engine's live lines then catch up and `caught_up()` is emitted when the last one is
in. No torch or whisper is imported here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
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


@dataclass
class Opening:
    """How a recording's device opening went: `done` is set once it has opened or refused, and
    `refused` then holds the reason it would not (None: it opened). Written by the opening thread
    before `done` is set, read after."""

    done: threading.Event = field(default_factory=threading.Event)
    refused: str | None = None


class RecordingController(QObject):
    opened = Signal()
    refused = Signal(str)
    _open_result = Signal(object)  # the reason the device was refused, or None (from the opening thread)
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
        self._opening = Opening()
        self._awaiting_open = False  # the window has not heard how the device opening went
        self._open_result.connect(self._on_open_result)  # queued: emitted on the opening thread
        self.path: Path | None = None

    @property
    def active(self) -> bool:
        """Recording now (not after `stop`, even while its device and file are being closed)."""
        return self.session is not None and not self._stopped and not self.session.capture.ended.is_set()

    @property
    def busy(self) -> bool:
        """Recording (its device still opening included), or live lines catching up after the stop."""
        return self.active or self._catching_up or self._awaiting_open

    def start(self, source: Any, path: Path, connect: Connect | None = None, speakers: bool = True,
              language: str | None = None) -> None:  # fmt: skip
        """Start recording `source` into `path`, with live lines from the engine `connect` reaches
        (None: recording only). Returns at once: `opened` or `refused` follows."""
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
        opening = Opening()
        self._stopped, self._closed, self._opening = False, threading.Event(), opening  # read by `shutdown`
        self.session, self.link, self._awaiting_open = session, link, True
        args = (session, link, opening)
        threading.Thread(target=self._open, args=args, daemon=True, name="live-open").start()
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
        args = (session, self._closed, self._opening)
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
            self._opening.done.wait()
            if self._opening.refused is None:
                self.session.stop()
        if self.link is not None:
            self.link.close()
        self._timer.stop()

    def _open(self, session: Any, link: LiveLink | None, opening: Opening) -> None:
        try:
            session.start()
            if link is not None:
                link.start()  # only once the device is open: a refused device never starts an engine
        except (RecordingError, ValueError) as exc:  # a device or file that will not open, an odd rate
            opening.refused = str(exc)
        finally:  # told before `done`: before the `stopped` of a Stop pressed meanwhile, before `shutdown`
            self._open_result.emit(opening.refused)
            opening.done.set()

    def _on_open_result(self, refused: str | None) -> None:
        self._awaiting_open = False  # one at a time: no recording starts while the window awaits this
        if refused is None:
            self.opened.emit()
            return
        self._stopped, self._catching_up = True, False  # a Stop pressed while it opened ends here too
        self._closed.set()  # nothing to close: a window closing now does not wait for it
        if self.link is not None:
            self.link.close()  # never started: the bar stops saying it loads models
        self.status.emit(self._status())
        self.refused.emit(refused)

    def _close(self, session: Any, closed: threading.Event, opening: Opening) -> None:
        step_back()
        opening.done.wait()
        if opening.refused is not None:  # nothing was recorded: `refused` says so, not `stopped`
            closed.set()
            return
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
        ended = self.session.capture.ended.is_set() and not self._awaiting_open
        if ended and not self._stopped:
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
