"""Live lines: each chunk's stitched lines, sent once they can no longer change.

`LineStream(chunks, config).feed(result)` takes chunk results in any order and returns the lines
that became final: a chunk's lines are final when it and every chunk before it are decoded,
because removing text repeated across a boundary needs the previous chunk. Lines are the chunk's
segments made absolute and repaired exactly as `engine.stitching.stitch` does, with the repeated
boundary text removed, so their words, in order, are the final transcript's words (speakers are
still chunk-local here: `chunk_speaker`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.stitching import StitchConfig, absolute_utterances, drop_edge_duplicates
from engine.types import Chunk, ChunkResult, Utterance


class LineStream:
    def __init__(self, chunks: Sequence[Chunk], config: StitchConfig) -> None:
        self.order = sorted(chunks, key=lambda c: c.index)
        self.config = config
        self.results: dict[int, ChunkResult] = {}
        self.next = 0  # position in `order` of the first chunk not yet sent
        self.previous: tuple[Chunk, list[Utterance]] | None = None

    def feed(self, result: ChunkResult) -> list[dict[str, Any]]:
        self.results[result.chunk.index] = result
        lines: list[dict[str, Any]] = []
        while self.next < len(self.order) and self.order[self.next].index in self.results:
            chunk = self.order[self.next]
            lines += [_line(u, chunk, s) for u, s in self._final(self.results.pop(chunk.index))]
            self.next += 1
        return lines

    def _final(self, result: ChunkResult) -> list[tuple[Utterance, int | None]]:
        drop = self.config.inversions == "drop"
        index = result.chunk.index
        local = {(index, s.speaker): str(s.speaker) for s in result.segments if s.speaker is not None}
        own = absolute_utterances(result, local, drop)
        if self.previous is not None:
            before, utterances = self.previous
            own = drop_edge_duplicates([before, result.chunk], [utterances, own], self.config)[1]
        self.previous = (result.chunk, own)
        return [(u, None if u.speaker is None else int(u.speaker)) for u in own]


def _line(u: Utterance, chunk: Chunk, speaker: int | None) -> dict[str, Any]:
    return {"start": u.start, "end": u.end, "text": u.text, "chunk": chunk.index, "chunk_speaker": speaker}
