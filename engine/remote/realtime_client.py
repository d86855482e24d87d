"""A live-audio client of a Murmur server's `WS /v1/realtime` (`murmur record --live --remote`,
and the app's recording, which speaks to its own engine process or a server the same way).

`RealtimeClient(url, key, on_line, on_error, speakers=False, language=None)`: `start()` connects
(audio sent before is kept and sent then, so a client can connect once its microphone is open) (an
http(s) URL becomes ws(s)://…/v1/realtime, the endpoint's own address stays as it is; `ServerError`
when it cannot) and sets the session to 16 kHz PCM16, the language, and provisional speakers when
asked (`session.murmur.speakers`);
`send(samples)` sends 16 kHz float32 samples as they are captured (`input_audio_buffer.append`);
each completed item's lines come to `on_line(RemoteLine)` on the receiving thread (absolute
seconds, and the provisional speaker "S1"… when asked for), server `error` events to `on_error`,
and a known voice's name for a speaker (`murmur.speaker.named`, a server with a voice library) to
`on_name(speaker, name_or_None, score_or_None)`.
`behind_seconds()`: how long the oldest speech the server has closed (`committed`) has waited
for its lines (0 when none waits); `lines` counts the lines received; `connected` says whether
the socket is open.
`finish(timeout)` commits what is left, waits until the server has transcribed everything sent
(`murmur.drained`) and closes; False when `timeout` ran out or the server went away first.
`close_code` is the server's close code once the socket has ended (see engine/serve/realtime.py).
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.errors import ServerError

RATE = 16000


@dataclass(frozen=True, slots=True)
class RemoteLine:
    start: float  # seconds from the first sample sent
    end: float
    text: str
    speaker: str | None = None  # provisional ("S1"…), when the session asked for speakers


LineFn = Callable[[RemoteLine], None]
ErrorFn = Callable[[str], None]
NameFn = Callable[[str, str | None, float | None], None]


def realtime_url(url: str) -> str:
    """The WebSocket address of a server's realtime endpoint from its base URL (or that address)."""
    base = url.rstrip("/")
    if base.startswith(("http://", "https://")):
        base = "ws" + base[len("http") :]
    return base.removesuffix("/v1/realtime").removesuffix("/v1") + "/v1/realtime"


class RealtimeClient:
    def __init__(self, url: str, key: str | None, on_line: LineFn, on_error: ErrorFn, speakers: bool = False,
                 language: str | None = None, on_name: NameFn | None = None) -> None:  # fmt: skip
        self.url, self.key = realtime_url(url), key
        self.on_line, self.on_error = on_line, on_error
        self.speakers, self.language, self.on_name = speakers, language, on_name
        self.close_code: int | None = None
        self.lines = 0
        self._committed: dict[str, float] = {}  # item id → when the server closed it (monotonic)
        self._socket: Any = None
        self._early: list[bytes] = []  # audio captured before the socket was open
        self._drained = threading.Event()
        self._ended = threading.Event()
        self._lock = threading.RLock()
        self._thread = threading.Thread(target=self._receive, name="realtime-receive", daemon=True)

    def start(self) -> None:
        from websockets.sync.client import connect

        headers = {"Authorization": f"Bearer {self.key}"} if self.key else None
        try:
            socket = connect(self.url, additional_headers=headers, open_timeout=30, legacy=True)
        except Exception as exc:
            raise ServerError(f"cannot open the live stream at {self.url}: {exc}") from exc
        audio = {"input": {"format": {"type": "audio/pcm", "rate": RATE},
                           "transcription": {"language": self.language}}}  # fmt: skip
        session = {"type": "transcription", "audio": audio, "murmur": {"speakers": self.speakers}}
        with self._lock:  # audio captured meanwhile waits, so it follows the early audio
            self._socket = socket
            self._send({"type": "session.update", "session": session})
            for pcm in self._early:
                self._append(pcm)
            self._early = []
        self._thread.start()

    def send(self, samples: np.ndarray) -> None:
        """Send captured audio (kept until `start` when the socket is not open yet)."""
        pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes()
        with self._lock:
            if self._socket is None:
                self._early.append(pcm)
                return
        if pcm and not self._ended.is_set():
            self._append(pcm)

    @property
    def connected(self) -> bool:
        return self._socket is not None and not self._ended.is_set()

    def behind_seconds(self, now: float | None = None) -> float:
        """How long the oldest closed speech still without its lines has waited."""
        with self._lock:
            oldest = min(self._committed.values(), default=None)
        return 0.0 if oldest is None else max(0.0, (now or time.monotonic()) - oldest)

    def _append(self, pcm: bytes) -> None:
        self._send({"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm).decode()})

    def finish(self, timeout: float | None = None) -> bool:
        """Commit, wait for every line, close; whether all came."""
        if not self._ended.is_set():
            self._send({"type": "input_audio_buffer.commit"})
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._drained.is_set() and not self._ended.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                break
            self._drained.wait(0.1)
        done = self._drained.is_set()
        if self._socket is not None:
            self._socket.close()
        self._thread.join(timeout=5)
        return done

    def _send(self, event: dict[str, Any]) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            with self._lock:
                self._socket.send(json.dumps(event))
        except ConnectionClosed:
            self._ended.set()

    def _receive(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            for message in self._socket:
                self._event(json.loads(message))
        except ConnectionClosed:
            pass
        finally:
            self.close_code = self._socket.close_code
            self._ended.set()

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "input_audio_buffer.committed":
            with self._lock:
                self._committed[str(event.get("item_id"))] = time.monotonic()
        elif kind == "conversation.item.input_audio_transcription.completed":
            for line in event.get("lines", []):
                self.lines += 1
                self.on_line(RemoteLine(float(line["start"]), float(line["end"]), line["text"],
                                        line.get("speaker")))  # fmt: skip
            with self._lock:
                self._committed.pop(str(event.get("item_id")), None)
        elif kind == "murmur.speaker.named" and self.on_name is not None:
            self.on_name(str(event.get("speaker")), event.get("name"), event.get("score"))
        elif kind == "murmur.drained":
            self._drained.set()
        elif kind == "error":
            self.on_error(event.get("error", {}).get("message", "the server reported an error"))
