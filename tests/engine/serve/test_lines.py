"""Live lines of a served job: each chunk's stitched lines, sent once they can no longer change."""

from __future__ import annotations

from engine.serve.lines import LineStream
from engine.stitching import StitchConfig
from engine.types import Chunk, ChunkResult, Segment

CHUNKS = [Chunk(0, 0.0, 10.0), Chunk(1, 10.0, 20.0), Chunk(2, 30.0, 40.0)]


def result(index: int, *segments: Segment) -> ChunkResult:
    return ChunkResult(chunk=CHUNKS[index], segments=segments)


def test_a_chunks_lines_wait_for_every_chunk_before_it_and_come_in_order():
    stream = LineStream(list(reversed(CHUNKS)), StitchConfig())
    assert stream.feed(result(1, Segment(1.0, 2.0, "second one", speaker=0))) == []
    assert stream.feed(result(2, Segment(0.5, 1.5, "third one"))) == []
    lines = stream.feed(result(0, Segment(0.0, 1.0, " first one ", speaker=1), Segment(2.0, 3.0, "")))
    assert lines == [
        {"start": 0.0, "end": 1.0, "text": "first one", "chunk": 0, "chunk_speaker": 1},
        {"start": 11.0, "end": 12.0, "text": "second one", "chunk": 1, "chunk_speaker": 0},
        {"start": 30.5, "end": 31.5, "text": "third one", "chunk": 2, "chunk_speaker": None},
    ]
    assert stream.results == {}  # nothing held once sent


def test_text_repeated_across_a_touching_boundary_is_sent_once():
    stream = LineStream(CHUNKS, StitchConfig())
    first = stream.feed(result(0, Segment(7.0, 9.9, "we will meet on friday morning", speaker=0)))
    second = stream.feed(result(1, Segment(0.0, 3.0, "on friday morning then we go home", speaker=0)))
    assert [line["text"] for line in first] == ["we will meet on friday morning"]
    assert [line["text"] for line in second] == ["then we go home"]


def test_chunks_apart_keep_their_text_and_inverted_times_follow_the_config():
    stream = LineStream(CHUNKS[1:], StitchConfig())
    assert stream.feed(result(1, Segment(8.0, 9.9, "see you on friday morning")))[0]["text"]
    apart = stream.feed(result(2, Segment(0.0, 2.0, "on friday morning we meet")))
    assert [line["text"] for line in apart] == ["on friday morning we meet"]  # 10 s apart: no repeat
    dropping = LineStream(CHUNKS[:1], StitchConfig(inversions="drop"))
    assert dropping.feed(result(0, Segment(3.0, 1.0, "backwards"), Segment(4.0, 5.0, "fine"))) == [
        {"start": 4.0, "end": 5.0, "text": "fine", "chunk": 0, "chunk_speaker": None}]  # fmt: skip
    repairing = LineStream(CHUNKS[:1], StitchConfig())
    assert [li["text"] for li in repairing.feed(result(0, Segment(3.0, 1.0, "backwards")))] == ["backwards"]
