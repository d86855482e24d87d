"""Streamed multipart uploads (`engine.serve.upload`), in process: what lands on disk, what is
refused, and that nothing is left behind when a client stops, leaves or sends too much."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from starlette.requests import ClientDisconnect

from engine.serve.upload import (
    MAX_FIELD_BYTES,
    MAX_FIELDS,
    BadUpload,
    Upload,
    UploadStalled,
    UploadTooLarge,
    receive_upload,
)

KIND = "multipart/form-data; boundary=b0"


def body(file: bytes | None = b"RIFFdata", filename: str = "talk.wav", fields=()) -> bytes:
    head = '--b0\r\nContent-Disposition: form-data; name="{}"{}\r\n\r\n'
    parts = [head.format(k, "").encode() + v.encode() + b"\r\n" for k, v in fields]
    if file is not None:
        parts.append(head.format("file", f'; filename="{filename}"').encode() + file + b"\r\n")
    return b"".join(parts) + b"--b0--\r\n"


async def pieces(data: bytes, size: int = 7, then: BaseException | None = None) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]
    if then is not None:
        raise then


def receive(folder: Path, data: bytes, max_bytes: int = 1000, kind: str = KIND, **kw) -> Upload:
    return asyncio.run(receive_upload(pieces(data, **kw), kind, folder, max_bytes))


def test_the_file_lands_whole_in_the_folder_under_a_private_name_with_its_extension(tmp_path):
    upload = receive(tmp_path, body(b"x" * 300, "../../etc/Board Meeting.WAV"))
    assert upload.path is not None and upload.path.parent == tmp_path
    assert upload.path.name.startswith("upload-") and upload.path.suffix == ".wav"
    assert upload.path.read_bytes() == b"x" * 300 and upload.size == 300
    assert upload.filename == "../../etc/Board Meeting.WAV"  # kept for display only
    assert list(tmp_path.iterdir()) == [upload.path]


def test_an_extension_murmur_does_not_read_is_dropped_and_a_long_name_cut(tmp_path):
    upload = receive(tmp_path, body(b"abc", "talk.exe"))
    assert upload.path is not None and upload.path.suffix == ""
    assert receive(tmp_path, body(b"abc", "a" * 300 + ".wav")).filename == "a" * 200
    windows = receive(tmp_path, body(b"abc", "C:\\talks\\x.mp3"))
    assert windows.path is not None and windows.path.suffix == ".mp3"


def test_fields_come_back_as_strings_repeated_names_as_lists(tmp_path):
    fields = [("model", "whisper-1"), ("timestamp_granularities[]", "word"),
              ("timestamp_granularities", "segment"), ("model", "last")]  # fmt: skip
    upload = receive(tmp_path, body(fields=fields))
    assert upload.get("model") == "last"
    assert upload.get("missing") is None and upload.get("missing", "d") == "d"
    assert upload.all("timestamp_granularities") == ["segment", "word"]
    assert upload.all("missing") == []


def test_a_file_of_exactly_the_limit_is_taken_one_byte_more_is_refused_and_deleted(tmp_path):
    assert receive(tmp_path, body(b"y" * 100), max_bytes=100).size == 100
    for path in tmp_path.iterdir():
        path.unlink()
    with pytest.raises(UploadTooLarge):
        receive(tmp_path, body(b"y" * 101), max_bytes=100)
    with pytest.raises(UploadTooLarge, match=r"^the file is larger than this server's limit of 1 MB$"):
        receive(tmp_path, body(b"y" * (2**20 + 1)), max_bytes=2**20, size=65536)
    assert list(tmp_path.iterdir()) == []


def test_fields_up_to_their_limits_are_taken_and_beyond_them_refused(tmp_path):
    longest = "v" * MAX_FIELD_BYTES
    assert receive(tmp_path, body(fields=[("a", longest)]), size=4096).get("a") == longest
    with pytest.raises(BadUpload, match=r"^form field 'a' is too long$"):
        receive(tmp_path, body(fields=[("a", "v" * (MAX_FIELD_BYTES + 1))]), size=4096)
    many = [(f"f{i}", "1") for i in range(MAX_FIELDS)]
    assert len(receive(tmp_path, body(fields=many)).fields) == MAX_FIELDS
    with pytest.raises(BadUpload, match=r"^the form has too many fields$"):
        receive(tmp_path, body(fields=[*many, ("one", "more")]))


@pytest.mark.parametrize(
    ("data", "kind", "message"),
    [
        (body(), "application/json", "^send the audio as multipart/form-data with a 'file' field$"),
        (body(), "multipart/form-data", "^send the audio as multipart/form-data with a 'file' field$"),
        (body(file=None, fields=[("model", "x")]), KIND, "^the form has no 'file', or the file is empty$"),
        (body(file=b""), KIND, "^the form has no 'file', or the file is empty$"),
        (body(b"a")[: -len(b"--b0--\r\n")] + body(b"b"), KIND, "^the form has more than one 'file'$"),
        (b"--b0\r\nno headers end here\r\n\r\n--zz", KIND, "^the form could not be read: "),
    ],
)
def test_a_form_that_is_not_one_audio_upload_is_refused_and_leaves_nothing(tmp_path, data, kind, message):
    with pytest.raises(BadUpload, match=message):
        receive(tmp_path, data, kind=kind)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("failure", [ClientDisconnect(), RuntimeError("the socket broke")])
def test_a_client_that_goes_away_mid_file_leaves_no_partial_file(tmp_path, failure):
    with pytest.raises(type(failure)):
        receive(tmp_path, body(b"z" * 500)[:300], then=failure)
    assert list(tmp_path.iterdir()) == []


def test_a_client_that_stops_sending_is_told_it_stalled_and_leaves_nothing(tmp_path):
    async def stalls() -> AsyncIterator[bytes]:
        yield body(b"z" * 50)[:80]
        await asyncio.sleep(30)
        yield b"never"

    with pytest.raises(UploadStalled, match=r"nothing arrived for 0.2 s"):
        asyncio.run(receive_upload(stalls(), KIND, tmp_path, 1000, idle_timeout=0.2))
    assert list(tmp_path.iterdir()) == []


def test_a_slow_client_is_fine_while_each_piece_comes_within_the_deadline(tmp_path):
    async def slow() -> AsyncIterator[bytes]:
        async for piece in pieces(body(b"w" * 40), 16):
            await asyncio.sleep(0.01)
            yield piece

    upload = asyncio.run(receive_upload(slow(), KIND, tmp_path, 1000, idle_timeout=5))
    assert upload.path is not None and upload.path.read_bytes() == b"w" * 40


def test_discard_removes_the_file_and_tolerates_none(tmp_path):
    upload = receive(tmp_path, body())
    upload.discard()
    upload.discard()
    assert list(tmp_path.iterdir()) == []
    Upload().discard()


def test_a_reference_clip_may_be_long_but_not_endless_and_at_most_four_come(tmp_path):
    from engine.serve.upload import MAX_CLIP_BYTES, MAX_CLIPS

    clip = "c" * MAX_CLIP_BYTES  # base64 audio: far over an ordinary field's limit
    name = "known_speaker_references[]"
    taken = receive(tmp_path, body(fields=[(name, clip)]), size=2**20)
    assert taken.all("known_speaker_references") == [clip]
    with pytest.raises(BadUpload, match="too long") as long:
        receive(tmp_path, body(fields=[(name, clip + "c")]), size=2**20)
    assert long.value.param == "known_speaker_references"
    assert len(receive(tmp_path, body(fields=[(name, "c")] * MAX_CLIPS)).fields[name]) == MAX_CLIPS
    with pytest.raises(BadUpload, match="at most 4") as many:
        receive(tmp_path, body(fields=[(name, "c")] * (MAX_CLIPS + 1)))
    assert many.value.param == "known_speaker_references"
    with pytest.raises(BadUpload, match="form field 'known_speaker_names' is too long"):
        receive(tmp_path, body(fields=[("known_speaker_names", "n" * (MAX_FIELD_BYTES + 1))]), size=4096)


def test_names_and_fields_in_another_encoding_are_taken_with_replacement_characters(tmp_path):
    latin1 = (
        b'--b0\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nCaf\xe9 au lait\r\n'
        b'--b0\r\nContent-Disposition: form-data; name="r\xe9sum\xe9"\r\n\r\nyes\r\n'
        b'--b0\r\nContent-Disposition: form-data; name="file"; filename="r\xe9union.MP3"\r\n\r\nID3data\r\n'
        b"--b0--\r\n"
    )
    upload = receive(tmp_path, latin1)
    assert upload.get("prompt") == "Caf\ufffd au lait" and upload.get("r\ufffdsum\ufffd") == "yes"
    assert upload.filename == "r\ufffdunion.MP3"
    assert upload.path is not None and upload.path.suffix == ".mp3" and upload.path.read_bytes() == b"ID3data"


def test_a_part_is_read_whatever_the_order_of_its_headers_and_a_nameless_one_is_ignored(tmp_path):
    parts = (
        b'--b0\r\nContent-Type: audio/mpeg\r\nContent-Disposition: form-data; name="file"\r\n\r\nID3data\r\n'
        b"--b0\r\nContent-Type: text/plain\r\n\r\nno name at all\r\n"  # no Content-Disposition
        b"--b0\r\nContent-Disposition: form-data\r\n\r\nno name either\r\n"
        b"--b0--\r\n"
    )
    upload = receive(tmp_path, parts)
    assert upload.path is not None and upload.path.read_bytes() == b"ID3data" and upload.size == 7
    assert upload.filename == ""  # no name given: the transcript names no file
    assert upload.path.suffix == "" and list(tmp_path.iterdir()) == [upload.path]
