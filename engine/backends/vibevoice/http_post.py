"""One bounded HTTP exchange with a server: a deadline for the whole request and a cap on the reply.

Contract of `post_json(url, body, deadline_s, max_bytes)`:
- the whole exchange (connect, send, headers, body) ends within `deadline_s` seconds however the
  server sends its bytes (a server dripping one byte a second is cut off at the deadline, not
  after each read): a watchdog shuts the socket at the deadline, and `TimeoutError` is raised;
- a reply body larger than `max_bytes` (sized or chunked, even endless) is abandoned once the cap
  is passed and raises `ReplyTooLarge`; memory stays within the cap;
- an HTTP status ≥ 400 raises `HTTPStatusError` with the status and the start of the body;
- the body must be JSON: anything else, including JSON nested too deep for the parser, raises
  `ValueError`. Connection failures raise `ConnectionError`/`OSError`.
`reachable(url, timeout)` says why a server cannot be reached (None when a connection opens).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
import urllib.parse
from typing import Any

_PIECE = 1 << 16  # bytes read at a time


class ReplyTooLarge(Exception):
    pass


class HTTPStatusError(Exception):
    def __init__(self, code: int, body: bytes) -> None:
        super().__init__(f"HTTP {code}")
        self.code, self.body = code, body


def post_json(url: str, body: bytes, deadline_s: float, max_bytes: int) -> dict[str, Any]:
    """POST a JSON body and return the reply's JSON (see the module contract)."""
    parts = urllib.parse.urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = kind(parts.hostname or "", parts.port, timeout=deadline_s)
    expired = threading.Event()
    watchdog = threading.Timer(deadline_s, _shut, (conn, expired))
    watchdog.daemon = True
    started = time.monotonic()
    watchdog.start()
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request("POST", path, body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        data = _read_capped(response, max_bytes, started + deadline_s)
        if expired.is_set():  # the watchdog closed the socket: what arrived is incomplete
            raise TimeoutError()
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set() or time.monotonic() - started >= deadline_s:
            raise TimeoutError(f"no answer within {deadline_s:g} s") from None
        if isinstance(exc, OSError):
            raise
        raise ConnectionError(str(exc) or type(exc).__name__) from None
    finally:
        watchdog.cancel()
        conn.close()
    if response.status >= 400:
        raise HTTPStatusError(response.status, data[:4096])
    return parse_json(data)


def parse_json(data: bytes) -> dict[str, Any]:
    """The JSON object in `data`; ValueError for anything else (not JSON, too deep, not an object)."""
    try:
        reply = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError("its JSON is nested too deep to read") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"it is not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"it is not JSON ({exc.msg} at byte {exc.pos})") from None
    if not isinstance(reply, dict):
        raise ValueError(f"it is a JSON {type(reply).__name__}, not an object")
    return reply


def reachable(url: str, timeout: float) -> str | None:
    """None when a TCP connection to the server of `url` opens within `timeout`, else why not."""
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            return None
    except OSError as exc:
        return str(exc.strerror or exc)


def _read_capped(response: http.client.HTTPResponse, max_bytes: int, deadline: float) -> bytes:
    pieces: list[bytes] = []
    size = 0
    while piece := response.read1(_PIECE):
        size += len(piece)
        if size > max_bytes:
            raise ReplyTooLarge(f"the reply passed {max_bytes:,} bytes")
        if time.monotonic() > deadline:
            raise TimeoutError()
        pieces.append(piece)
    return b"".join(pieces)


def _shut(conn: http.client.HTTPConnection, expired: threading.Event) -> None:
    """At the deadline: wake any blocked read by shutting the socket."""
    expired.set()
    sock = conn.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
