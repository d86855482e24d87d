"""A multipart upload read as it streams in: the `file` part to a temporary file, fields to strings.

`receive_upload(chunks, content_type, folder, max_bytes, idle_timeout)` parses the body chunk by
chunk (never holding it whole) and writes the `file` part into a fresh file in `folder` named by
`tempfile`: no client input becomes a path but the file name's extension, kept when it is one
Murmur reads, so the file is decoded as `murmur transcribe` would decode it. It stops with
`UploadTooLarge` the moment the file passes `max_bytes`, and with `UploadStalled` when nothing
arrives for `idle_timeout` seconds. Small form fields (at most `MAX_FIELD_BYTES` each,
`MAX_FIELDS` in all; a `known_speaker_references[]` clip, base64 audio, up to `MAX_CLIP_BYTES`,
at most `MAX_CLIPS` of them) come back as strings, a repeated name (`timestamp_granularities[]`) as
several values. A malformed body is `BadUpload`. On any error, a client that goes away
included, the partial file is deleted.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from python_multipart.multipart import MultipartParseError, MultipartParser, parse_options_header

from engine.audio.io import SUPPORTED_EXTENSIONS

MAX_FIELD_BYTES = 64 * 1024
MAX_FIELDS = 64
CLIP_FIELDS = ("known_speaker_references", "known_speaker_references[]")
MAX_CLIP_BYTES = 4 * 1024 * 1024  # 10 s of 48 kHz stereo 24-bit WAV, in base64
MAX_CLIPS = 4


class BadUpload(ValueError):
    """The request is not a multipart form with a `file` part, or a field (`param`) is too large."""

    def __init__(self, message: str, param: str = "file") -> None:
        super().__init__(message)
        self.param = param


class UploadTooLarge(ValueError):
    """The uploaded file is over the server's size limit."""


class UploadStalled(ValueError):
    """The client stopped sending its upload."""


@dataclass(slots=True)
class Upload:
    path: Path | None = None  # the `file` part on disk (None until it arrives)
    filename: str = ""  # the name the client gave (display only)
    size: int = 0
    fields: dict[str, list[str]] = field(default_factory=dict)

    def get(self, name: str, default: str | None = None) -> str | None:
        values = self.fields.get(name)
        return values[-1] if values else default

    def all(self, name: str) -> list[str]:
        return [*self.fields.get(name, []), *self.fields.get(f"{name}[]", [])]

    def discard(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)


class _Parts:
    """MultipartParser callbacks that route each part to the file or to a field."""

    def __init__(self, upload: Upload, folder: Path, max_bytes: int) -> None:
        self.upload, self.folder, self.max_bytes = upload, folder, max_bytes
        self.header_field, self.header_value = b"", b""
        self.headers: dict[bytes, bytes] = {}
        self.name, self.value = "", bytearray()
        self.out: BinaryIO | None = None

    def callbacks(self) -> dict:
        return {
            "on_part_begin": self.begin, "on_header_field": self.on_field, "on_header_value": self.on_value,
            "on_header_end": self.header_end, "on_headers_finished": self.headers_done,
            "on_part_data": self.data, "on_part_end": self.end,
        }  # fmt: skip

    def begin(self) -> None:
        self.headers, self.header_field, self.header_value = {}, b"", b""

    def on_field(self, data: bytes, start: int, end: int) -> None:
        self.header_field += data[start:end]

    def on_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]

    def header_end(self) -> None:
        self.headers[self.header_field.lower()] = self.header_value
        self.header_field, self.header_value = b"", b""

    def headers_done(self) -> None:
        _, options = parse_options_header(self.headers.get(b"content-disposition", b""))
        self.name = options.get(b"name", b"").decode("utf-8", "replace")
        self.value = bytearray()
        if self.name == "file":
            if self.upload.path is not None:
                raise BadUpload("the form has more than one 'file'")
            self.upload.filename = options.get(b"filename", b"").decode("utf-8", "replace")[:200]
            suffix = _suffix(self.upload.filename)
            handle, name = tempfile.mkstemp(prefix="upload-", suffix=suffix, dir=self.folder)
            self.upload.path = Path(name)
            self.out = os.fdopen(handle, "wb")

    def data(self, data: bytes, start: int, end: int) -> None:
        if self.out is not None:
            self.upload.size += end - start
            if self.upload.size > self.max_bytes:
                raise UploadTooLarge(f"the file is larger than this server's limit of {_mb(self.max_bytes)}")
            self.out.write(data[start:end])
            return
        self.value += data[start:end]
        if len(self.value) > (MAX_CLIP_BYTES if self.name in CLIP_FIELDS else MAX_FIELD_BYTES):
            raise BadUpload(f"form field {self.name!r} is too long", self.name.removesuffix("[]"))

    def end(self) -> None:
        if self.out is not None:
            self.out.close()
            self.out = None
            return
        fields = self.upload.fields
        if sum(len(v) for v in fields.values()) >= MAX_FIELDS:
            raise BadUpload("the form has too many fields")
        if self.name in CLIP_FIELDS and sum(len(fields.get(n, [])) for n in CLIP_FIELDS) >= MAX_CLIPS:
            raise BadUpload(f"at most {MAX_CLIPS} known_speaker_references", "known_speaker_references")
        fields.setdefault(self.name, []).append(self.value.decode("utf-8", "replace"))

    def close(self) -> None:
        if self.out is not None:
            self.out.close()


async def receive_upload(
    chunks: AsyncIterator[bytes], content_type: str, folder: Path, max_bytes: int,
    idle_timeout: float | None = None,
) -> Upload:
    """Parse a streamed multipart body (see the module docstring)."""
    kind, options = parse_options_header(content_type)
    boundary = options.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        raise BadUpload("send the audio as multipart/form-data with a 'file' field")
    upload = Upload()
    parts = _Parts(upload, folder, max_bytes)
    parser = MultipartParser(boundary, parts.callbacks())
    try:
        async for chunk in _paced(chunks, idle_timeout):
            parser.write(chunk)
        parser.finalize()
    except MultipartParseError as exc:
        parts.close()
        upload.discard()
        raise BadUpload(f"the form could not be read: {exc}") from exc
    except BaseException:
        parts.close()
        upload.discard()
        raise
    parts.close()
    if upload.path is None or upload.size == 0:
        upload.discard()
        raise BadUpload("the form has no 'file', or the file is empty")
    return upload


async def _paced(chunks: AsyncIterator[bytes], idle_timeout: float | None) -> AsyncIterator[bytes]:
    """`chunks`, each within `idle_timeout` seconds of the one before (None: no deadline)."""
    pieces = aiter(chunks)
    while True:
        try:
            chunk = await asyncio.wait_for(anext(pieces), idle_timeout)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise UploadStalled(f"the upload stalled: nothing arrived for {idle_timeout:g} s") from None
        yield chunk


def _suffix(filename: str) -> str:
    """The client's extension when it is one Murmur reads (it picks the decoder), else none."""
    suffix = Path(filename.replace("\\", "/")).suffix.lower()
    return suffix if suffix in SUPPORTED_EXTENSIONS else ""


def _mb(n: int) -> str:
    return f"{n / 2**20:g} MB"
