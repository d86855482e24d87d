"""`WS /v1/realtime`: live audio in over a WebSocket, transcript lines out as they become final.

`register(app, server)` adds the route. Each connection runs one `RealtimeSession` (the protocol:
`realtime_session.py`) on the server's backend (and its voice library, with `--voices`), so its
speech decodes in the same shared batch as the uploaded files' chunks. The API key, when the
server has one, comes as `Authorization: Bearer KEY`; without it the handshake is refused (a close
before the upgrade: the client sees HTTP 403, and no socket opens). An open socket ends with a close
code that says why:

    1000  the client closed it (or sent a close)        1003  a sample rate or audio format not supported
    1007  a frame that is not a JSON event, or audio    1011  the server failed
          that is not base64 PCM16                      1013  the server is too far behind this stream
    4408  nothing received for `IDLE_SECONDS` while no line was owed to the client

Whatever ends it (a close, a disconnect, bad input, the idle timeout), the session's decoder stops,
its queued speech is dropped and its audio freed; `murmur_realtime_sessions` in /metrics counts
the sessions open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from fastapi import FastAPI, WebSocket
from starlette.websockets import WebSocketDisconnect, WebSocketState

from engine.serve.auth import authorized
from engine.serve.realtime_errors import BAD_PAYLOAD, SessionError
from engine.serve.realtime_session import RealtimeSession

log = logging.getLogger(__name__)
IDLE_SECONDS = 15.0  # a session that receives nothing this long is closed
POLL_SECONDS = 0.05  # how often finished items are looked for
NORMAL, UNAUTHORIZED, SERVER_ERROR, IDLE = 1000, 1008, 1011, 4408
MAX_REASON_BYTES = 123  # a close frame's payload is at most 125 bytes, two of them the code


def register(app: FastAPI, server: Any) -> None:
    """Add `WS /v1/realtime` to `app` for `server` (its backend, detector and key)."""
    server.realtime_sessions = 0

    @app.websocket("/v1/realtime")
    async def realtime(websocket: WebSocket) -> None:
        if not authorized(server.config.api_key, websocket.headers.get("authorization")):
            await websocket.close(code=UNAUTHORIZED, reason="invalid or missing API key")
            return
        await websocket.accept()
        server.realtime_sessions += 1
        try:
            await _serve(websocket, server)
        finally:
            server.realtime_sessions -= 1


async def _serve(websocket: WebSocket, server: Any) -> None:
    loop = asyncio.get_running_loop()
    out: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def emit(event: dict[str, Any]) -> None:  # from any thread
        loop.call_soon_threadsafe(out.put_nowait, event)

    session = await asyncio.to_thread(RealtimeSession, server.backend, server.detector, emit, _voices(server))
    sender = asyncio.create_task(_send(websocket, out))
    ticker = asyncio.create_task(_tick(session))
    code, reason = NORMAL, ""
    try:
        session.start()
        code, reason = await _receive(websocket, session)
    except SessionError as exc:
        emit(exc.event())
        code, reason = exc.close or BAD_PAYLOAD, exc.message
    except Exception as exc:  # a bug ends this session, not the server
        log.exception("a realtime session failed")
        code, reason = SERVER_ERROR, f"the server failed: {exc}"
    finally:
        ticker.cancel()
        await asyncio.to_thread(session.close)
        await _flush(out, sender)
        if code is not None and websocket.client_state is WebSocketState.CONNECTED:
            with contextlib.suppress(RuntimeError, WebSocketDisconnect):
                await websocket.close(code=code, reason=close_reason(reason))


def close_reason(text: str) -> str:
    """`text` cut to the 123 bytes of UTF-8 a close frame holds (a longer reason fails the close: the
    client would see 1006, not the code that says why), never inside a character."""
    return text.encode()[:MAX_REASON_BYTES].decode(errors="ignore")


def _voices(server: Any) -> Any:
    """The voice library live speakers are named from: the server's `--voices`, or None."""
    from engine.voices import VoiceLibrary, library_path

    chosen = server.pipeline_config.speakers.voices
    return None if chosen is None else VoiceLibrary(library_path(chosen))


async def _receive(websocket: WebSocket, session: RealtimeSession) -> tuple[int | None, str]:
    """Events until the client goes (close code None: nothing to send back) or idles out."""
    while True:
        try:
            message = await asyncio.wait_for(websocket.receive(), IDLE_SECONDS)
        except TimeoutError:
            if session.busy:  # the client waits for its lines
                continue
            session.emit(SessionError(f"nothing received for {IDLE_SECONDS:g} s", "idle_timeout").event())
            return IDLE, "idle"
        if message["type"] == "websocket.disconnect":
            return None, ""
        text = message.get("text")
        if text is None:
            raise SessionError("binary frames are not accepted: send JSON events", "invalid_event",
                               None, BAD_PAYLOAD)  # fmt: skip
        try:
            event = json.loads(text)
        except ValueError as exc:
            raise SessionError("a frame is not a JSON event", "invalid_event", None, BAD_PAYLOAD) from exc
        await asyncio.to_thread(session.handle, event)


async def _tick(session: RealtimeSession) -> None:
    while True:
        await asyncio.sleep(POLL_SECONDS)
        session.poll()


async def _send(websocket: WebSocket, out: asyncio.Queue[dict[str, Any]]) -> None:
    while True:
        event = await out.get()
        try:
            await websocket.send_text(json.dumps(event))
        except (RuntimeError, WebSocketDisconnect):
            return  # the client has gone: the receiver ends the session
        finally:
            out.task_done()


async def _flush(out: asyncio.Queue[dict[str, Any]], sender: asyncio.Task[None]) -> None:
    """Let the sender deliver what is queued (an error before the close), then stop it."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(out.join(), 2.0)
    sender.cancel()
