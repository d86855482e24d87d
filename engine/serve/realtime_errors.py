"""A realtime client's mistakes: the `error` event it is sent, and the close code that ends its socket.

`SessionError(message, code, param, close)`: `event()` is OpenAI's `error` event shape
(`invalid_request_error`, `code`, `message`, `param`); `close` is the WebSocket close code when
the session must end (None: the session goes on): `BAD_FORMAT` (1003: a rate or audio format not
supported), `BAD_PAYLOAD` (1007: not JSON, not base64, an odd number of bytes), `BEHIND` (1013:
too much speech waiting to be decoded).
"""

from __future__ import annotations

from typing import Any

BAD_FORMAT, BAD_PAYLOAD, BEHIND = 1003, 1007, 1013


class SessionError(Exception):
    """A client's mistake: an `error` event, and the close code when the session must end."""

    def __init__(self, message: str, code: str, param: str | None = None, close: int | None = None) -> None:
        super().__init__(message)
        self.message, self.code, self.param, self.close = message, code, param, close

    def event(self) -> dict[str, Any]:
        return {"type": "error", "error": {"type": "invalid_request_error", "code": self.code,
                                           "message": self.message, "param": self.param}}  # fmt: skip
