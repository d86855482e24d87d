"""Connections as `murmur serve` takes them: a cap on how many are open, a deadline for a silent client.

`protocol(config)` is uvicorn's h11 protocol (pass it as `uvicorn.run(http=...)`) with two guards:

- a connection that would make more than `config.max_connections` open is answered 503 with
  Retry-After and closed before anything is read from it, so clients that connect and wait
  cannot use up the process' file descriptors;
- a request's head (request line and headers) must be complete within `config.client_timeout`
  seconds of the connection opening or of the previous response: a client that connects and
  says nothing, or drips its headers, is disconnected. A body's pieces have the same deadline
  each (`engine.serve.upload.receive_upload`), and an idle keep-alive connection is closed after
  uvicorn's `timeout_keep_alive`. A connection upgraded to a WebSocket (`/v1/realtime`) leaves
  this deadline behind: the live session's own idle rule applies (`engine.serve.realtime`).
"""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from engine.serve.config import ServeConfig

RETRY_AFTER = 5  # seconds a client turned away for want of connections waits


def protocol(config: ServeConfig) -> Any:
    """The guarded protocol class for `uvicorn.run(http=...)`, bound to `config`'s limits."""
    return functools.partial(GuardedH11Protocol, client_timeout=config.client_timeout,
                             max_connections=config.max_connections)  # fmt: skip


def _busy() -> bytes:
    body = json.dumps({"error": {"message": "the server has too many open connections; try again shortly",
                                 "type": "rate_limit_error"}}).encode()  # fmt: skip
    head = (f"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: "
            f"{RETRY_AFTER}\r\nconnection: close\r\ncontent-length: {len(body)}\r\n\r\n")  # fmt: skip
    return head.encode() + body


class GuardedH11Protocol(H11Protocol):
    def __init__(self, *args: Any, client_timeout: float, max_connections: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.client_timeout, self.max_connections = client_timeout, max_connections
        self._head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            transport.write(_busy())
            transport.close()
            return
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self._handling():  # a whole request head has arrived: the app has it now
            self._stop_waiting()

    def handle_websocket_upgrade(self, event: Any) -> None:
        self._stop_waiting()  # the WebSocket protocol owns the connection now, with its own idle rule
        super().handle_websocket_upgrade(event)

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._await_head()  # before the next pipelined request is handled, which stops it again
        super().on_response_complete()

    def _await_head(self) -> None:
        self._stop_waiting()
        self._head_deadline = self.loop.call_later(self.client_timeout, self._silent)

    def _stop_waiting(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _handling(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _silent(self) -> None:
        self._head_deadline = None
        if not self._handling() and not self.transport.is_closing():
            self.transport.close()
