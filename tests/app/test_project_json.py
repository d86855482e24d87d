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
    assert len(stream.sizes) >= total // BLOCK, "held back and written in fewer, larger pieces"
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


def test_the_layout_is_one_key_per_line_at_the_top_two_levels_and_one_item_per_line_in_lists():
    stream = CountingStream()
    data = {
        "format": "murmur-project",
        "audio": {"path": "/a.wav", "stream": None},
        "transcript": {"utterances": iter([{"text": "Hi.", "start": 0.5}]), "meta": {"x": [1, 2]}},
        "speakers": [],
        "speech": iter([[0.0, 1.5], [2.0, 3.0]]),
        "settings": {},
    }
    write_json(stream, data)
    assert stream.getvalue().decode() == (
        '{\n "format": "murmur-project",\n "audio": {\n  "path": "/a.wav",\n  "stream": null\n },\n'
        ' "transcript": {\n  "utterances": [\n   {"text": "Hi.", "start": 0.5}\n  ],\n'
        '  "meta": {"x": [1, 2]}\n },\n "speakers": [],\n "speech": [\n  [0.0, 1.5],\n  [2.0, 3.0]\n ],\n'
        ' "settings": {}\n}\n'
    )
