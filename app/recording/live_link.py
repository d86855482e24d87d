"""A recording's live lines from the engine: its audio goes to `WS /v1/realtime` as it is captured.

`LiveLink(connect, on_line, on_error, speakers, language, on_name)` is what a recording in the window uses
instead of decoding in the window's process: the app's own engine process and a remote Murmur
server are spoken to alike (`connect()` returns the address and key: it starts the local engine
when needed, so it may take seconds, and runs on a thread of its own). Contract:
- `start()` begins connecting; `send(samples)` takes 16 kHz float32 audio as it is captured and
  never blocks: audio captured before the socket opens is kept and sent first, in order.
- The engine's lines come to `on_line(LiveLine)` (absolute seconds, provisional speaker "S1"…) on
  the socket's thread; a known voice recognised in a live speaker (an engine with a voice library)
  to `on_name(speaker, name_or_None, score_or_None)`. Anything that ends live lines — the
  engine will not start, the stream cannot open, the server reports an error, the socket closes
  while recording — reaches `on_error(message)` once per cause; the recording itself never
  depends on the link, and audio is no longer kept once the link has failed (memory bounded).
- `connecting` from construction until the socket is open or the link failed; `behind_seconds()`
  is the server's backlog as the user sees it (closed speech still without its lines); `lines`
  counts the lines received.
- `finish(timeout)` (after the recording stopped) waits for the connection attempt, then for every
  line of the audio sent; `close()` drops the stream at once (the window is closing, or the
  recording never began).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from engine.errors import MurmurError
from engine.live.transcriber import LiveLine
from engine.remote.realtime_client import NameFn, RealtimeClient, RemoteLine
from engine.types import SpeechSegment, Utterance

Connect = Callable[[], tuple[str, str | None]]


class LiveLink:
    def __init__(self, connect: Connect, on_line: Callable[[LiveLine], None], on_error: Callable[[str], None],
                 speakers: bool = True, language: str | None = None,
                 on_name: NameFn | None = None) -> None:  # fmt: skip
        self.connect, self.on_line, self.on_error, self.on_name = connect, on_line, on_error, on_name
        self.speakers, self.language = speakers, language
        self.client: RealtimeClient | None = None
        self._unsent: list[np.ndarray] = []  # audio captured before the client existed
        self._failed = False
        self._said = False  # the server has reported an error of its own
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._open, daemon=True, name="live-link")

    @property
    def connecting(self) -> bool:
        """From construction (the recording's device may still be opening) until the socket is
        open or the link has failed."""
        client = self.client
        if self._failed:
            return False
        return client is None or (not client.connected and client.close_code is None)

    @property
    def lines(self) -> int:
        return self.client.lines if self.client is not None else 0

    def behind_seconds(self) -> float:
        return self.client.behind_seconds() if self.client is not None else 0.0

    def start(self) -> None:
        self._thread.start()

    def send(self, samples: np.ndarray) -> None:
        with self._lock:
            if self._failed:
                return
            if self.client is None:
                self._unsent.append(samples)
                return
            client = self.client
        client.send(samples)

    def lost(self) -> bool:
        """The socket ended while it should be open (the engine stopped): reported once."""
        client = self.client
        if client is None or self._failed or client.connected or self._thread.is_alive():
            return False
        message = f"the engine closed the live stream (code {client.close_code}); live lines stop here"
        self._fail(message, say=not self._said)  # a reason the server gave before closing was said
        return True

    def finish(self, timeout: float | None = None) -> bool:
        """Wait for the connection attempt, then for the lines of everything sent; whether all came."""
        self._thread.join(timeout)
        client = self.client
        return client is not None and not self._failed and client.finish(timeout)

    def close(self) -> None:
        with self._lock:
            self._failed, self._unsent = True, []
        if self.client is not None:
            self.client.finish(timeout=0)

    def _open(self) -> None:
        try:
            url, key = self.connect()
            client = RealtimeClient(url, key, self._line, self._server_error, self.speakers, self.language,
                                    self.on_name)  # fmt: skip
            with self._lock:
                if self._failed:
                    return
                for piece in self._unsent:  # kept by the client until its socket is open, in order
                    client.send(piece)
                self._unsent, self.client = [], client
            client.start()
        except (MurmurError, OSError) as exc:
            self._fail(f"live lines cannot start: {exc}")

    def _fail(self, message: str, say: bool = True) -> None:
        with self._lock:
            if self._failed:
                return
            self._failed, self._unsent = True, []
        if say:
            self.on_error(message)

    def _server_error(self, message: str) -> None:
        self._said = True
        self.on_error(f"the engine reported: {message}")

    def _line(self, line: RemoteLine) -> None:
        utterance = Utterance(line.start, line.end, line.text, line.speaker)
        self.on_line(LiveLine(utterance, SpeechSegment(line.start, line.end), time.monotonic()))
