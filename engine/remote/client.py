"""The client of a Murmur server (`murmur serve`), for the CLI and the app: standard library only.

`RemoteClient(url, api_key)`: `health()` (model, queue), `check()` (health plus the key, for a
*Test connection* button) and `transcribe(recording, on_progress, cancel)`, which uploads the
recording as 16 kHz mono FLAC (`Stage.LOAD` progress with detail "uploading" while it goes up),
follows the job's Server-Sent Events — stage progress, each chunk's final lines (as
`Progress.partial` chunk results with absolute times) — and returns the server's transcript. A
cancel closes the stream, which cancels the job on the server. A server that answers 429 or 503
with `Retry-After` is asked again after that many seconds (with a `Stage.LOAD` progress saying
so; a cancel ends the wait), for at most `MAX_BUSY_WAIT` seconds in all. Every failure is a
`ServerError` with a plain message; `ServerError.lines` keeps the lines already received when a
server dies mid-job. What goes over the wire (the FLAC, the form, the events) is `wire.py`'s.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import secrets
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

from engine.errors import Cancelled, ServerError
from engine.export.json_format import transcript_from_dict
from engine.remote.wire import (  # noqa: F401  (UPLOAD_RATE, encode_flac stay importable from here)
    UPLOAD_RATE,
    encode_flac,
    error_text,
    multipart,
    partial_result,
    retry_after,
    sse_events,
)
from engine.types import Progress, Recording, Stage, Transcript

_BLOCK = 64 * 1024  # bytes per upload write (one progress report each)
_TIMEOUT = 60.0  # seconds without a byte from the server before giving up on it (it pings every 5)

MAX_BUSY_WAIT = 600.0  # seconds in all a client waits on a busy server's Retry-After before failing
_BUSY = (429, 503)

ProgressFn = Callable[[Progress], None]


class RemoteError(ServerError):
    """A server answered with an error, or went away; `lines` are those received before."""

    def __init__(self, message: str, status: int | None = None, lines: tuple[dict, ...] = ()) -> None:
        super().__init__(message)
        self.status, self.lines = status, lines


class _Busy(Exception):
    """The server asked to be asked again in `seconds`."""

    def __init__(self, error: RemoteError, seconds: float) -> None:
        super().__init__(str(error))
        self.error, self.seconds = error, seconds


class RemoteClient:
    def __init__(self, url: str, api_key: str | None = None, timeout: float = _TIMEOUT) -> None:
        parts = urllib.parse.urlsplit(url.strip().rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the server address must look like http://HOST:PORT, not {url!r}")
        self.url, self.api_key, self.timeout = url.strip().rstrip("/"), api_key or None, timeout
        self._parts = parts

    # small requests
    def health(self) -> dict[str, Any]:
        return self._json("GET", "/health")

    def check(self) -> str:
        """One line for a *Test connection* button: the server's model and queue (the key checked too)."""
        health = self.health()
        self._json("GET", "/v1/models")  # 401 here when the key is wrong
        return (f"{health.get('model')} · {health.get('jobs_active', 0)} job(s) running, "
                f"room for {health.get('max_queued_jobs')}")  # fmt: skip

    def _json(self, method: str, path: str) -> dict[str, Any]:
        connection = self._connect()
        try:
            connection.request(method, self._path(path), headers=self._headers())
            response = connection.getresponse()
            body = response.read()
        except OSError as exc:
            raise RemoteError(f"cannot reach the Murmur server at {self.url}: {_reason(exc)}") from exc
        finally:
            connection.close()
        if response.status != 200:
            raise RemoteError(error_text(body, response.status), response.status)
        return json.loads(body)

    # transcription
    def transcribe(
        self,
        recording: Recording,
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        fields: dict[str, str] | None = None,
    ) -> Transcript:
        report = on_progress or (lambda p: None)
        flac = encode_flac(recording)
        waited = 0.0
        while True:
            try:
                return self._attempt(recording, flac, report, cancel, fields)
            except _Busy as busy:
                if waited + busy.seconds > MAX_BUSY_WAIT:
                    raise busy.error from None
                again = f"the server is busy: trying again in {busy.seconds:g} s"
                report(Progress(Stage.LOAD, 0, recording.duration, again))
                _wait(busy.seconds, cancel)
                waited += busy.seconds

    def _attempt(self, recording: Recording, flac: bytes, report: ProgressFn, cancel: threading.Event | None,
                 fields: dict[str, str] | None) -> Transcript:  # fmt: skip
        boundary = secrets.token_hex(16)
        form = {"response_format": "verbose_json", "stream": "true", "murmur_progress": "true"}
        head, tail = multipart(boundary, {**form, **(fields or {})})
        connection = self._connect()
        watcher = _CancelWatcher(connection, cancel)
        lines: list[dict] = []  # received so far: kept in the error when the server goes away
        try:
            told = _uploaded(report, recording.duration)
            response = self._sent(connection, boundary, head, flac, tail, told, cancel)
            if response.status != 200:
                error = RemoteError(error_text(response.read(), response.status), response.status)
                delay = retry_after(response.getheader("Retry-After"))
                if response.status in _BUSY and delay is not None:
                    raise _Busy(error, delay)
                raise error
            return self._follow(response, recording.duration, report, cancel, lines)
        except (OSError, ValueError, http.client.HTTPException) as exc:
            if cancel is not None and cancel.is_set():
                raise Cancelled() from exc
            lost = f"lost the connection to the Murmur server at {self.url}: {_reason(exc)}{_arrived(lines)}"
            raise RemoteError(lost, lines=tuple(lines)) from exc
        finally:
            watcher.stop()
            connection.close()  # on a cancel this closes the stream: the server cancels the job

    def _sent(self, connection: http.client.HTTPConnection, boundary: str, head: bytes, flac: bytes,
              tail: bytes, report: ProgressFn, cancel: threading.Event | None,
              ) -> http.client.HTTPResponse:  # fmt: skip
        """Upload, then the server's answer: one given before the body was all sent (429, 413, 401,
        after which the server may close) is still read."""
        try:
            self._upload(connection, boundary, head, flac, tail, report, cancel)
        except OSError as exc:
            if cancel is not None and cancel.is_set():
                raise
            try:
                return connection.getresponse()
            except (OSError, http.client.HTTPException):
                raise exc from None
        return connection.getresponse()

    def _upload(self, connection: http.client.HTTPConnection, boundary: str, head: bytes, flac: bytes,
                tail: bytes, report: ProgressFn, cancel: threading.Event | None) -> None:  # fmt: skip
        headers = {**self._headers(), "Content-Type": f"multipart/form-data; boundary={boundary}",
                   "Content-Length": str(len(head) + len(flac) + len(tail))}  # fmt: skip
        connection.putrequest("POST", self._path("/v1/audio/transcriptions"))
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders(head)
        for start in range(0, len(flac), _BLOCK):
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            connection.send(flac[start : start + _BLOCK])
            sent = min(start + _BLOCK, len(flac))
            report(Progress(Stage.LOAD, sent, len(flac), "uploading"))
        connection.send(tail)

    def _follow(self, response: http.client.HTTPResponse, duration: float, report: ProgressFn,
                cancel: threading.Event | None, lines: list[dict]) -> Transcript:  # fmt: skip
        chunks, seen = 0, set()  # chunks the server plans, chunks whose lines arrived
        for event in sse_events(response, cancel):
            kind = event.get("type")
            if kind == "murmur.progress":
                stage = Stage(event["stage"])
                report(Progress(stage, event["done"], event["total"], event.get("detail", "")))
                chunks = int(event["total"]) if stage is Stage.INFER else chunks
            elif kind == "transcript.text.delta" and event.get("lines"):  # the last may be text only
                lines.extend(event["lines"])
                seen.update(int(li["chunk"]) for li in event["lines"])
                partial = partial_result(event["lines"], duration)
                report(Progress(Stage.INFER, len(seen), max(chunks, len(seen)), partial=partial))
            elif kind == "transcript.text.done":
                return transcript_from_dict(event["murmur"])
            elif kind == "error":
                raise RemoteError(event["error"]["message"], lines=tuple(lines))
        raise RemoteError(
            f"the Murmur server at {self.url} stopped before the transcript was finished{_arrived(lines)}",
            lines=tuple(lines),
        )

    # plumbing
    def _connect(self) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self._parts.scheme == "https" else http.client.HTTPConnection
        return kind(self._parts.hostname or "", self._parts.port, timeout=self.timeout)

    def _path(self, path: str) -> str:
        return self._parts.path.rstrip("/") + path

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}


class _CancelWatcher:
    """Closes the connection as soon as `cancel` is set, so a wait for the server's next event ends."""

    def __init__(self, connection: http.client.HTTPConnection, cancel: threading.Event | None) -> None:
        self.connection, self.cancel, self.done = connection, cancel, threading.Event()
        if cancel is not None:
            threading.Thread(target=self._watch, name="murmur-remote-cancel", daemon=True).start()

    def _watch(self) -> None:
        while not self.done.wait(0.05):
            if self.cancel is not None and self.cancel.is_set():
                sock = self.connection.sock
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(2)
                return

    def stop(self) -> None:
        self.done.set()


def _uploaded(report: ProgressFn, seconds: float) -> ProgressFn:
    """`report` with the upload's bytes told as the share of the recording's seconds sent, as the
    load stage of a local run counts (never bytes shown as a clock)."""

    def told(progress: Progress) -> None:
        share = progress.completed / progress.total if progress.total else 1.0
        report(Progress(Stage.LOAD, share * seconds, seconds, progress.detail))

    return told


def _arrived(lines: list[dict]) -> str:
    """How much had arrived when a server went away (the caller decides whether to keep it)."""
    return f" ({len(lines)} line(s) had arrived)" if lines else " (no line had arrived: nothing is kept)"


def _wait(seconds: float, cancel: threading.Event | None) -> None:
    if cancel is None:
        time.sleep(seconds)
    elif cancel.wait(seconds):
        raise Cancelled()


def _reason(exc: Exception) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
