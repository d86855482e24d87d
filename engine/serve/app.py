"""The HTTP face of `murmur serve`: an OpenAI-compatible transcription API on FastAPI.

    POST /v1/audio/transcriptions  multipart: file, model, response_format, timestamp_granularities[],
                                   stream, diarize, num_speakers (json | verbose_json | text | srt | vtt,
                                   or Server-Sent Events with stream=true)
    GET  /v1/models                the one model this server runs
    GET  /health                   model loaded, jobs and queue (no key needed; the model's name
                                   only with the key)
    GET  /metrics                  Prometheus text

Every error is JSON `{"error": {"message", "type"}}`: 400 bad request or audio, 401 key, 404, 413
too large or too long, 429 with Retry-After when `max_queued_jobs` are active, 503 while the model
is not ready. A client that disconnects (or closes its event stream) cancels its job: its queued
chunks are dropped and its rows freed.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from engine.errors import AudioDecodeError
from engine.serve.auth import authorized
from engine.serve.formats import FORMATS, GRANULARITIES, render_response
from engine.serve.jobs import Job, JobOptions, QueueFull
from engine.serve.length import TooLong, decode_failure, measure
from engine.serve.metrics import render_metrics
from engine.serve.upload import BadUpload, Upload, UploadStalled, UploadTooLarge, receive_upload

RETRY_AFTER = 5  # seconds a client told 429 waits before trying again
_POLL = 0.05  # seconds between looks at a job's events
_KEEP_ALIVE = 5.0  # seconds of silence on an event stream before a keep-alive comment
log = logging.getLogger(__name__)


class ApiError(Exception):
    def __init__(self, status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.kind, self.headers = status, message, kind, headers or {}


def create_app(server: Any) -> FastAPI:
    app = FastAPI(title="Murmur", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.server = server
    _add_error_handlers(app)

    @app.get("/health")
    async def health(request: Request) -> dict[str, Any]:
        keyed = authorized(server.config.api_key, request.headers.get("authorization"))
        return {
            "status": "ok" if server.ready else "loading", "model_loaded": server.ready,
            "model": server.model if keyed else None,  # a model path is for key holders only
            "backend": server.backend.name, "jobs_active": server.registry.active,
            "queue_depth": server.shared.source.jobs if server.shared is not None else server.registry.active,
            "max_queued_jobs": server.config.max_queued_jobs, "shared_batch": server.shared is not None,
        }  # fmt: skip

    @app.get("/v1/models")
    async def models(request: Request) -> dict[str, Any]:
        _check_key(server, request)
        entry = {"id": server.model, "object": "model", "created": 0, "owned_by": "murmur"}
        return {"object": "list", "data": [entry]}

    @app.get("/metrics")
    async def metrics(request: Request) -> PlainTextResponse:
        _check_key(server, request)
        return PlainTextResponse(render_metrics(server), media_type="text/plain; version=0.0.4")

    @app.post("/v1/audio/transcriptions")
    async def transcriptions(request: Request) -> Response:
        _check_key(server, request)
        _check_room(server, request)
        with server.places.arriving():  # an upload holds a job's place from before its first byte
            upload = await _receive(server, request)
            try:
                fmt, granularities, stream, options = _parameters(upload)
                duration = await asyncio.to_thread(_checked_duration, upload, server.config.max_audio_seconds)
                job = server.registry.submit(upload.path, duration, options)
            except QueueFull as exc:
                upload.discard()
                raise ApiError(429, str(exc), "rate_limit_error", {"Retry-After": str(RETRY_AFTER)}) from exc
            except BaseException:
                upload.discard()
                raise
        if stream:
            return StreamingResponse(_events(job), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache"})  # fmt: skip
        return await _answer(job, request, fmt, granularities)

    return app


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.message, exc.kind, exc.headers)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
        return _error(exc.status_code, str(exc.detail), kind, dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def failure(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, "the server failed on this request", "server_error")

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, "the request is not valid", "invalid_request_error")


def _error(status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status, headers=headers)


def _check_key(server: Any, request: Request) -> None:
    if not authorized(server.config.api_key, request.headers.get("authorization")):
        raise ApiError(401, "a valid API key is needed: 'Authorization: Bearer KEY'", "authentication_error",
                       {"WWW-Authenticate": "Bearer"})  # fmt: skip


def _check_room(server: Any, request: Request) -> None:
    """Refuse before reading the body: not ready, no room, or a declared size over the limit."""
    if not server.ready:
        raise ApiError(503, "the model is still loading; try again shortly", "server_error",
                       {"Retry-After": str(RETRY_AFTER)})  # fmt: skip
    if server.places.full:
        raise ApiError(429, f"the server is busy with {server.places.taken} jobs and uploads; try again "
                       "shortly", "rate_limit_error", {"Retry-After": str(RETRY_AFTER)})  # fmt: skip
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > server.config.max_upload_bytes + 64 * 1024:
        limit = server.config.max_upload_mb
        raise ApiError(413, f"the upload is larger than this server's limit of {limit:g} MB",
                       "invalid_request_error")  # fmt: skip


async def _receive(server: Any, request: Request) -> Upload:
    content_type = request.headers.get("content-type", "")
    try:
        limit, idle = server.config.max_upload_bytes, server.config.client_timeout
        return await receive_upload(request.stream(), content_type, server.folder, limit, idle)
    except UploadTooLarge as exc:
        raise ApiError(413, str(exc), "invalid_request_error") from exc
    except UploadStalled as exc:
        raise ApiError(408, str(exc), "invalid_request_error") from exc
    except ClientDisconnect as exc:  # one line in the log, not a traceback; the partial file is gone
        log.warning("a client (%s) went away during its upload; nothing was kept", _peer(request))
        raise ApiError(499, "the client went away", "invalid_request_error") from exc
    except BadUpload as exc:
        raise ApiError(400, str(exc), "invalid_request_error") from exc


def _parameters(upload: Upload) -> tuple[str, list[str], bool, JobOptions]:
    fmt = upload.get("response_format", "json") or "json"
    if fmt not in FORMATS:
        raise ApiError(400, f"response_format must be one of {', '.join(FORMATS)}", "invalid_request_error")
    granularities = upload.all("timestamp_granularities")
    if any(g not in GRANULARITIES for g in granularities):
        raise ApiError(400, "timestamp_granularities may hold 'segment' and 'word'", "invalid_request_error")
    try:
        diarize, speakers = _flag(upload.get("diarize")), _count(upload.get("num_speakers"))
        options = JobOptions(diarize=diarize, num_speakers=speakers, filename=upload.filename)
        stream = bool(_flag(upload.get("stream")))
    except ValueError as exc:
        raise ApiError(400, str(exc), "invalid_request_error") from exc
    return fmt, granularities, stream, options


def _flag(value: str | None) -> bool | None:
    if value is None or value == "":
        return None
    if value.lower() in ("true", "1", "yes"):
        return True
    if value.lower() in ("false", "0", "no"):
        return False
    raise ValueError(f"{value[:20]!r} is not true or false")


def _count(value: str | None) -> int | None:
    if value is None or value == "":
        return None
    if not value.isdigit():
        raise ValueError("num_speakers must be a whole number")
    return int(value)


def _checked_duration(upload: Upload, max_seconds: float) -> float:
    """The upload's length, measured by decoding it: not audio is 400, too long is 413."""
    if upload.path is None:
        raise ApiError(400, "the form has no 'file'", "invalid_request_error")
    try:
        return measure(upload.path, max_seconds)
    except TooLong as exc:
        raise ApiError(413, str(exc), "invalid_request_error") from exc
    except AudioDecodeError as exc:
        message = decode_failure(exc, upload.path, upload.filename)
        raise ApiError(400, message, "invalid_request_error") from exc
    except (OSError, ValueError) as exc:
        message = f"{upload.filename or 'the file'} is not an audio file this server can read"
        raise ApiError(400, message, "invalid_request_error") from exc


def _peer(request: Request) -> str:
    return f"{request.client.host}:{request.client.port}" if request.client else "unknown"


async def _answer(job: Job, request: Request, fmt: str, granularities: list[str]) -> Response:
    """Wait for the job (cancelling it if the client goes away) and render its transcript."""
    try:
        while not job.over:
            if await request.is_disconnected():
                job.cancel()
                return Response(status_code=499)
            await asyncio.sleep(_POLL)
    except asyncio.CancelledError:
        job.cancel()
        raise
    if job.transcript is None:
        event = job.events_from(0)[-1]
        status = 400 if event["error"]["type"] == "invalid_request_error" else 500
        return _error(status, event["error"]["message"], event["error"]["type"])
    body, media = render_response(job.transcript, fmt, granularities)
    warnings = {"X-Murmur-Warnings": json.dumps(job.warnings)} if job.warnings else None  # ASCII JSON
    return Response(body, media_type=media, headers=warnings)


async def _events(job: Job) -> AsyncIterator[str]:
    """The job's events as Server-Sent Events, then `[DONE]`; closing the stream cancels the job."""
    sent, quiet = 0, 0.0
    try:
        while True:
            events = job.events_from(sent)
            for event in events:
                yield f"data: {json.dumps(event)}\n\n"
            sent += len(events)
            if job.over and not job.events_from(sent):
                yield "data: [DONE]\n\n"
                return
            quiet = 0.0 if events else quiet + _POLL
            if quiet >= _KEEP_ALIVE:  # a comment line: the client knows the server is alive
                quiet = 0.0
                yield ": working\n\n"
            await asyncio.sleep(_POLL)
    finally:
        if not job.over:
            job.cancel()
