"""What a Murmur client sends and reads over HTTP, as pure functions: the upload (16 kHz mono
16-bit FLAC in a multipart form), the job's Server-Sent Events, a chunk's final lines as a
`ChunkResult`, a `Retry-After` header and an error body's message.

`RemoteClient` (`client.py`) owns the connection, the retries and the progress; nothing here does
I/O beyond the response it is handed.
"""

from __future__ import annotations

import http.client
import io
import json
import threading
from collections.abc import Iterator

import numpy as np
import soundfile as sf

from engine.errors import Cancelled
from engine.remote import pieces
from engine.types import Chunk, ChunkResult, Recording, Segment

UPLOAD_RATE = 16000


def encode_flac(recording: Recording) -> bytes:
    """The recording as 16 kHz mono 16-bit FLAC (resampled when it is at another rate)."""
    samples = recording.samples
    if recording.sample_rate != UPLOAD_RATE:
        from engine.audio.resample import resample

        samples = resample(samples, recording.sample_rate, UPLOAD_RATE)
    out = io.BytesIO()
    sf.write(out, np.clip(samples, -1.0, 1.0), UPLOAD_RATE, format="FLAC", subtype="PCM_16")
    return out.getvalue()


def multipart(boundary: str, fields: dict[str, str]) -> tuple[bytes, bytes]:
    """The multipart text before the file's bytes (the fields, the file's part header) and after."""
    head = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields.items()
    )
    head += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="audio.flac"\r\n'
             "Content-Type: audio/flac\r\n\r\n").encode()  # fmt: skip
    return head, f"\r\n--{boundary}--\r\n".encode()


def sse_events(response: http.client.HTTPResponse, cancel: threading.Event | None) -> Iterator[dict]:
    """The JSON events of a Server-Sent Events stream, until `[DONE]` or its end."""
    while True:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        line = response.readline()
        if not line:
            if cancel is not None and cancel.is_set():
                raise Cancelled()  # the stream was closed because of the cancel
            return
        text = line.decode("utf-8").strip()
        if not text.startswith("data:"):
            continue
        data = text[5:].strip()
        if data == "[DONE]":
            return
        yield pieces.loads(data)  # a final transcript is megabytes: parsed a line at a time


def partial_result(lines: list[dict], duration: float) -> ChunkResult:
    """A chunk's final lines as a chunk result; its chunk starts at 0 so its times are absolute."""
    segments = tuple(Segment(li["start"], li["end"], li["text"], li.get("chunk_speaker")) for li in lines)
    return ChunkResult(chunk=Chunk(index=int(lines[0]["chunk"]), start=0.0, end=duration), segments=segments)


def retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header in seconds (an HTTP date is not honoured), else None."""
    text = (value or "").strip()
    return float(text) if text.isdigit() else None


def error_text(body: bytes, status: int) -> str:
    try:
        message = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = body[:200].decode("utf-8", "replace") or "no details"
    return f"the Murmur server answered {status}: {message}"
