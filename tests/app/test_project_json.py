"""A large project is written in blocks, not a write per line: a 20,000-line save makes a few
hundred writes of about `BLOCK` characters each, and the file reads back as the data it was made
from."""

from __future__ import annotations

import io
import json

from app.project_json import BLOCK, write_json


class CountingStream(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def write(self, data) -> int:
        self.sizes.append(len(data))
        return super().write(data)


def big_project(lines: int) -> dict:
    utterances = [
        {"start": i * 2.0, "end": i * 2.0 + 1.5, "text": f"Line {i} of a long meeting.", "speaker": "S1"}
        for i in range(lines)
    ]
    return {"format": "murmur-project", "transcript": {"utterances": iter(utterances)}, "speakers": []}


def test_a_20000_line_save_is_written_in_blocks_not_line_by_line():
    stream = CountingStream()
    write_json(stream, big_project(20_000))
    total = sum(stream.sizes)
    assert len(stream.sizes) <= total // BLOCK + 2, "written in pieces smaller than a block"
    assert all(BLOCK <= size < 2 * BLOCK for size in stream.sizes[:-1])  # never the whole text at once
    data = json.loads(stream.getvalue())
    assert len(data["transcript"]["utterances"]) == 20_000
    assert data["transcript"]["utterances"][19_999]["text"] == "Line 19999 of a long meeting."


def test_each_line_of_speech_is_one_line_of_the_file():
    stream = CountingStream()
    write_json(stream, big_project(3))
    lines = stream.getvalue().decode().splitlines()
    speech = [line.strip().rstrip(",") for line in lines if '"text"' in line]
    assert [json.loads(line)["text"] for line in speech] == [f"Line {i} of a long meeting." for i in range(3)]
