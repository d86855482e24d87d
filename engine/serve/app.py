"""The HTTP face of `murmur serve`: an OpenAI-compatible transcription API on FastAPI.

    POST /v1/audio/transcriptions  multipart: file, model, language, prompt, temperature,
                                   response_format, timestamp_granularities[], stream; Murmur's
                                   diarize, num_speakers, speaker_labels, murmur_progress
                                   (`engine.serve.params`; answers: `routes_audio`)
    POST /v1/audio/translations    the same, into English (multilingual whisper models)
    GET  /v1/models                the one model this server runs, under a stable id
    GET  /v1/models/{id}           that model; any other id is 404 `model_not_found`
    GET  /health                   model loaded, jobs and queue (no key needed; the model's name
                                   only with the key)
    GET  /metrics                  Prometheus text (keyed, unless `--metrics-public`)

Every error is OpenAI's `{"error": {"message", "type", "param", "code"}}` (`openai_errors`): 400
bad request or audio (naming the parameter), 401 key, 404, 408 an upload that stalls, 413 too
large or too long (the length is measured by decoding, `engine.serve.length`), 429 with
Retry-After when `max_queued_jobs` places are taken by jobs and uploads still arriving, 503 while
the model is not ready. A client that disconnects (or closes its event stream) cancels its job: its
queued chunks are dropped and its rows freed; one that leaves mid-upload is one line in the log.
"""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import PurePath
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse
from starlette.requests import ClientDisconnect

from engine.errors import AudioDecodeError
from engine.serve.auth import authorized
from engine.serve.jobs import Job, JobOptions
from engine.serve.length import TooLong, decode_failure, measure
from engine.serve.metrics import render_metrics
from engine.serve.openai_errors import (
    RETRY_AFTER,
    ApiError,
    bad_parameter,
    busy,
    install_error_handlers,
    unauthorized,
)
from engine.serve.realtime import register as register_realtime
from engine.serve.routes_audio import add_audio_routes
from engine.serve.upload import BadUpload, Upload, UploadStalled, UploadTooLarge, receive_upload

log = logging.getLogger(__name__)


def create_app(server: Any) -> FastAPI:
    app = FastAPI(title="Murmur", docs_url=None, redoc_url=None, openapi_url=None)
    install_error_handlers(app)
    register_realtime(app, server)  # WS /v1/realtime: live audio in (engine/serve/realtime.py)

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
        check_key(server, request)
        return {"object": "list", "data": [model_entry(server)]}

    @app.get("/v1/models/{model:path}")
    async def model(model: str, request: Request) -> dict[str, Any]:
        check_key(server, request)
        if model != model_id(server.backend):
            raise ApiError(404, f"The model '{model}' does not exist", param="model", code="model_not_found")
        return model_entry(server)

    @app.get("/metrics")
    async def metrics(request: Request) -> PlainTextResponse:
        if not server.config.metrics_public:
            check_key(server, request)
        return PlainTextResponse(render_metrics(server), media_type="text/plain; version=0.0.4")

    def check(request: Request) -> None:
        check_key(server, request)
        check_room(server, request)

    async def start(upload: Upload, options: JobOptions) -> Job:
        duration = await asyncio.to_thread(checked_duration, upload, server.config.max_audio_seconds)
        return server.registry.submit(upload.path, duration, options)

    add_audio_routes(app, server, check, lambda request: receive(server, request), start)
    return app


def model_id(backend: Any) -> str:
    """The model's id: the backend and the model's name, without spaces or the server's folders
    ("whisper-tiny.en", "vibevoice-VibeVoice-ASR")."""
    config = getattr(backend, "backend", backend).config  # a SharedBackend wraps the real one
    name = config.server_model if getattr(config, "engine", None) == "server" else config.model
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", PurePath(str(name)).name).strip("-")
    return f"{backend.name}-{slug or 'model'}"


def model_entry(server: Any) -> dict[str, Any]:
    return {"id": model_id(server.backend), "object": "model", "created": 0, "owned_by": "murmur"}


def check_key(server: Any, request: Request) -> None:
    header = request.headers.get("authorization")
    if not authorized(server.config.api_key, header):
        raise unauthorized(header)


def check_room(server: Any, request: Request) -> None:
    """Refuse before reading the body: not ready, no room, or a declared size over the limit."""
    if not server.ready:
        raise ApiError(503, "the model is still loading; try again shortly", "server_error",
                       headers={"Retry-After": str(RETRY_AFTER)})  # fmt: skip
    if server.places.full:
        raise busy(f"the server is busy with {server.places.taken} jobs and uploads; try again shortly")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > server.config.max_upload_bytes + 64 * 1024:
        limit = server.config.max_upload_mb
        raise ApiError(413, f"the upload is larger than this server's limit of {limit:g} MB", param="file")


async def receive(server: Any, request: Request) -> Upload:
    content_type = request.headers.get("content-type", "")
    try:
        limit, idle = server.config.max_upload_bytes, server.config.client_timeout
        return await receive_upload(request.stream(), content_type, server.folder, limit, idle)
    except UploadTooLarge as exc:
        raise ApiError(413, str(exc), param="file") from exc
    except UploadStalled as exc:
        raise ApiError(408, str(exc), param="file") from exc
    except ClientDisconnect as exc:  # one line in the log, not a traceback; the partial file is gone
        log.warning("a client (%s) went away during its upload; nothing was kept", _peer(request))
        raise ApiError(499, "the client went away") from exc
    except BadUpload as exc:
        raise ApiError(400, str(exc), param=exc.param) from exc


def checked_duration(upload: Upload, max_seconds: float) -> float:
    """The upload's length, measured by decoding it (never a header's word): not audio is 400, too
    long is 413."""
    if upload.path is None:
        raise bad_parameter("file", "the form has no 'file'")
    try:
        return measure(upload.path, max_seconds)
    except TooLong as exc:
        raise ApiError(413, str(exc), param="file") from exc
    except AudioDecodeError as exc:
        raise bad_parameter("file", decode_failure(exc, upload.path, upload.filename)) from exc
    except (OSError, ValueError) as exc:
        name = upload.filename or "the file"
        raise bad_parameter("file", f"{name} is not an audio file this server can read") from exc


def _peer(request: Request) -> str:
    return f"{request.client.host}:{request.client.port}" if request.client else "unknown"
