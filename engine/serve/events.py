"""A job's events as one client's stream shows them (`stream=true`).

A job publishes Murmur's events (`engine.serve.jobs`); `ClientStream(progress).show(event)` turns
each into what OpenAI's stream holds, so a client written for OpenAI sees only its own event
types:

- `transcript.text.delta`: `delta` is the text of the lines that became final, with the space
  that separates it from the text before, so `"".join(deltas)` is exactly the done event's `text`
  (a last delta carries any text the final stitching added after the lines: never a gap).
- `transcript.text.done`: `text` and `usage` (`{"type": "duration", "seconds"}`).
- `transcript.text.segment` (response_format diarized_json): one per segment of the diarized
  answer (`engine.serve.formats.diarized_segments`), just before the done event — speakers are
  settled only once the whole recording has been heard, so they cannot come with the deltas.
- `error`: `{"type": "error", "error": {...}}`, which the `openai` client raises as an `APIError`.
- Murmur's own `murmur.job` / `murmur.progress` events, the deltas' `lines` and the done event's
  verbose fields (segments, speakers, the whole transcript as `murmur`) only for a client that
  asked for them (`murmur_progress=true`, as Murmur's own client does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

DELTA, DONE = "transcript.text.delta", "transcript.text.done"
Segments = Callable[[], list[dict[str, Any]]]  # the finished job's diarized segments


class ClientStream:
    def __init__(self, progress: bool, segments: Segments | None = None) -> None:
        self.progress = progress
        self.segments = segments  # diarized_json: segment events before the done event
        self.text = ""  # the deltas sent so far, joined

    def show(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event["type"]
        if kind.startswith("murmur."):
            return [event] if self.progress else []
        if kind == DELTA:
            piece = " ".join(line["text"] for line in event["lines"] if line["text"])
            return [self._delta(piece, event["lines"])] if piece else []
        if kind == DONE:
            return self._done(event)
        error = event["error"]  # an error: OpenAI's error object
        return [{"type": kind, "error": {"message": error["message"], "type": error["type"],
                                         "param": None, "code": None}}]  # fmt: skip

    def _delta(self, piece: str, lines: list[dict[str, Any]]) -> dict[str, Any]:
        delta = f" {piece}" if self.text else piece
        self.text += delta
        shown: dict[str, Any] = {"type": DELTA, "delta": delta}
        if self.progress:
            shown["lines"] = lines
        return shown

    def _done(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        final: str = event["text"]
        shown: list[dict[str, Any]] = []
        if final.startswith(self.text) and len(final) > len(self.text):
            rest = final[len(self.text) :]
            self.text = final
            shown.append({"type": DELTA, "delta": rest})
        if self.segments is not None:
            shown += self.segments()
        done = {"type": DONE, "text": final, "usage": event["usage"]}
        shown.append({**event, **done} if self.progress else done)
        return shown
