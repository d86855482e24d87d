"""`POST /v1/audio/transcriptions` and `POST /v1/audio/translations`: a job per upload, its answer.

Both check the key and the room (`app.check_key`, `app.check_room`), read the upload
(`app.receive`) holding one of the server's places from before its first byte until its job
starts (`Server.places`: parked uploads are bounded like running jobs), check its fields
(`engine.serve.params`) and what the model can do with them (`engine.serve.decoding`: a 400
naming the parameter it cannot honour), measure its length and start a job. Then:

- `stream=true` with json, verbose_json or diarized_json: Server-Sent Events (`engine.serve.events`), then
  `[DONE]`, with a comment line after each `heartbeat_seconds` without events; with text, srt or
  vtt the flag is ignored, as OpenAI documents, and the answer is that format.
- otherwise the rendered body once the job is done, with what the command line would have
  warned about the file (cut short, several streams…) in an `X-Murmur-Warnings` header (a JSON
  list; a stream shows them as `murmur.warning` events to a client that asked for Murmur's). A
  JSON answer still being computed after `heartbeat_seconds` is sent as a 200 whose body starts
  with one space per heartbeat (JSON allows leading whitespace), so a client's read timeout (the
  `openai` client's 600 s) never fires on a long recording and the job runs once; a job failing
  after that ends the body with the error object instead of the transcript. text/srt/vtt wait
  silently: leading blanks would change them.

A client that goes away (or closes its stream) cancels its job.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from engine.serve.decoding import Refused, job_backend
from engine.serve.events import ClientStream
from engine.serve.formats import DIARIZED, JSON_FORMATS, MEDIA, diarized_segments, render_response
from engine.serve.jobs import Job, QueueFull
from engine.serve.known_speakers import refusal
from engine.serve.openai_errors import bad_parameter, busy, error_body
from engine.serve.params import AudioRequest, transcription_request, translation_request

POLL = 0.05  # seconds between looks at a job
Check = Callable[[Request], None]  # a request's key and the server's room, before its body (app.py)
Receive = Callable[[Request], Any]  # reads its upload (app.py)


def add_audio_routes(
    app: FastAPI, server: Any, check: Check, receive: Receive, start: Callable[..., Any]
) -> None:
    @app.post("/v1/audio/transcriptions")
    async def transcriptions(request: Request) -> Response:
        return await _serve(server, request, (check, receive), start, transcription_request)

    @app.post("/v1/audio/translations")
    async def translations(request: Request) -> Response:
        return await _serve(server, request, (check, receive), start, translation_request)


async def _serve(server: Any, request: Request, admit: tuple[Check, Receive], start: Callable[..., Any],
                 read: Callable[[dict[str, list[str]]], AudioRequest]) -> Response:  # fmt: skip
    check, receive = admit
    check(request)  # the key, then room: a client without the key never holds a place
    try:
        with server.places.arriving():  # an upload holds a job's place from before its first byte
            upload = await receive(request)
            try:
                asked = read(upload.fields)
                _check_speakers(server, asked)
                try:
                    job_backend(server.backend, asked.options.decoding)
                except Refused as exc:
                    raise bad_parameter(exc.param, str(exc), "unsupported_value") from exc
                job = await start(upload, dataclasses.replace(asked.options, filename=upload.filename))
            except BaseException:
                upload.discard()
                raise
    except QueueFull as exc:
        raise busy(str(exc)) from exc
    if asked.stream and asked.fmt in JSON_FORMATS:
        segments = (lambda: diarized_segments(job.transcript)) if asked.fmt == DIARIZED else None
        events = _events(job, ClientStream(asked.progress, segments), server.config.heartbeat_seconds)
        headers = {"Cache-Control": "no-cache"}
        return StreamingResponse(events, media_type="text/event-stream", headers=headers)
    return await _answer(job, request, asked, server.config.heartbeat_seconds)


def _check_speakers(server: Any, asked: AudioRequest) -> None:
    """A 400 for speakers asked of a request the server will not diarize."""
    options, diarizer = asked.options, server.pipeline_config.speakers.diarizer
    refused = refusal(options.known_speakers, asked.fmt, options.diarize, diarizer)
    if refused is not None:
        raise refused


def _render(job: Job, asked: AudioRequest) -> tuple[bytes, int]:
    """The finished job's body and status: the transcript, or its error."""
    if job.transcript is None:
        error = job.events_from(0)[-1]["error"]
        status = 400 if error["type"] == "invalid_request_error" else 500
        return json.dumps(error_body(error["message"], error["type"])).encode(), status
    task, labels = asked.options.decoding.task, asked.speaker_labels
    fmt, granularities = asked.fmt, asked.granularities
    body, _ = render_response(job.transcript, fmt, granularities, task=task, speaker_labels=labels)
    return body, 200


async def _answer(job: Job, request: Request, asked: AudioRequest, heartbeat: float) -> Response:
    """Wait for the job (cancelling it if the client goes away), then its body; a JSON answer
    still waiting after `heartbeat` s goes on as a stream of heartbeat spaces."""
    waited = 0.0
    try:
        while not job.over and (waited < heartbeat or asked.fmt not in JSON_FORMATS):
            if await request.is_disconnected():
                job.cancel()
                return Response(status_code=499)
            await asyncio.sleep(POLL)
            waited += POLL
    except asyncio.CancelledError:
        job.cancel()
        raise
    if job.over:
        body, status = _render(job, asked)
        if status != 200:
            return JSONResponse(json.loads(body), status_code=status)
        warnings = {"X-Murmur-Warnings": json.dumps(job.warnings)} if job.warnings else None  # ASCII JSON
        return Response(body, media_type=MEDIA[asked.fmt], headers=warnings)
    return StreamingResponse(_heartbeats(job, asked, heartbeat), media_type=MEDIA[asked.fmt])


async def _heartbeats(job: Job, asked: AudioRequest, heartbeat: float) -> AsyncIterator[bytes]:
    quiet = heartbeat  # the first space goes at once: the wait so far was a heartbeat long
    try:
        while not job.over:
            if quiet >= heartbeat:
                quiet = 0.0
                yield b" "
            await asyncio.sleep(POLL)
            quiet += POLL
        yield _render(job, asked)[0]
    finally:
        if not job.over:
            job.cancel()


async def _events(job: Job, view: ClientStream, heartbeat: float) -> AsyncIterator[str]:
    """The job's events as this client sees them, as Server-Sent Events, then `[DONE]`, with a
    comment line after each `heartbeat` s without events; closing the stream cancels the job."""
    sent, quiet = 0, 0.0
    try:
        while True:
            events = job.events_from(sent)
            for event in events:
                for shown in view.show(event):
                    yield f"data: {json.dumps(shown)}\n\n"
            sent += len(events)
            if job.over and not job.events_from(sent):
                yield "data: [DONE]\n\n"
                return
            quiet = 0.0 if events else quiet + POLL
            if quiet >= heartbeat:  # a comment line: the client knows the server is alive
                quiet = 0.0
                yield ": working\n\n"
            await asyncio.sleep(POLL)
    finally:
        if not job.over:
            job.cancel()
