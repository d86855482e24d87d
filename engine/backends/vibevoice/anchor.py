"""The transcript segments a reply completes, read as its tokens arrive, as speech-token times.

`speech_anchor(tokenizer, tokens_per_second)` is an `engine.decode.api.SpeechAnchor`: each row gets a
`TimestampTracker` that reads the row's tokens as they come (the engine already reads them back every
step), keeps the text since the last complete segment object, and, each time an object closes,
reports its `Start` and `End` times as speech indices (seconds × the model's speech-token rate, which
the backend reads from the checkpoint: `speech_token_rate`) and the words its text adds to the
transcript: the word-character runs of its `Content`/`Text`, none when one of the last `REPEATS`
segments had the same text (a loop or a restart adds no words, whatever times it writes).
The engine decides what to do with them (`engine.decode.anchor`: the `speech-anchor` policy's
guarded anchor, and the speech evicted before it was transcribed). `voiced_spans` tells the engine
where the chunk's VAD speech lies, so that it can tell how far the words written can have reached.
Objects that are cut off report nothing as they arrive; `open()` reads the last one when the row
ends, as the transcript keeps it (`parsing.kept_times`: a cut-off object with words). A missing
time is None.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Sequence
from typing import Any

from engine.backends.vibevoice.config import SAMPLE_RATE
from engine.backends.vibevoice.jsonscan import scan_objects
from engine.backends.vibevoice.parsing import kept_times, parse_time
from engine.decode.api import SegmentTimes, SpeechAnchor
from engine.types import Chunk

_END_KEYS = ("end", "endtime")
_START_KEYS = ("start", "starttime")
_TEXT_KEYS = ("content", "text")
REPEATS = 64  # recent segment texts a segment's text is checked against (a repeat adds no words)


def speech_token_rate(model_config: Any, sample_rate: int = SAMPLE_RATE) -> float:
    """Speech tokens per second of audio: the sample rate over the acoustic tokenizer's hop length."""
    hop = int(model_config.acoustic_tokenizer_encoder_config.hop_length)
    return sample_rate / hop


class TokenText:
    """The text of single token ids, decoded once each (shared by every row of a backend)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.known: dict[int, str] = {}

    def __call__(self, token_id: int) -> str:
        text = self.known.get(token_id)
        if text is None:
            text = self.tokenizer.decode(
                [token_id], skip_special_tokens=False, clean_up_tokenization_spaces=False
            )
            self.known[token_id] = text
        return text


class TimestampTracker:
    """One row's reader (`engine.decode.api.AnchorTracker`)."""

    def __init__(self, text: TokenText, tokens_per_second: float) -> None:
        self.text, self.tokens_per_second = text, tokens_per_second
        self.pending = ""  # reply text after the last complete object
        self.recent: deque[str] = deque(maxlen=REPEATS)  # the last segments' texts, normalised

    def feed(self, token_ids: Sequence[int]) -> list[SegmentTimes]:
        closes = False
        for token in token_ids:
            piece = self.text(int(token))
            self.pending += piece
            closes = closes or "}" in piece
        return self._read_closed() if closes else []

    def open(self) -> SegmentTimes | None:
        """The segment still being written (its object not closed), if the transcript keeps it."""
        objects = scan_objects(self.pending)
        times = kept_times(objects[-1]) if objects and not objects[-1].closed else None
        return None if times is None else SegmentTimes(*self._scaled(times))

    def _read_closed(self) -> list[SegmentTimes]:
        complete = [o for o in scan_objects(self.pending) if o.closed]
        if not complete:
            return []
        self.pending = self.pending[complete[-1].end :]
        found = [_fields(o.value) for o in complete if o.value is not None]
        return [SegmentTimes(*self._scaled(_times(f)), words=self._new_words(f)) for f in found]

    def _scaled(self, times: tuple[float | None, float | None]) -> tuple[float | None, float | None]:
        start, end = (None if t is None else t * self.tokens_per_second for t in times)
        return start, end

    def _new_words(self, fields: dict[str, Any]) -> int:
        """Words of the segment's text, 0 when one of the last `REPEATS` segments had that text."""
        words = re.findall(r"\w+", _text(fields).lower())
        key = " ".join(words)
        if not words or key in self.recent:
            return 0
        self.recent.append(key)
        return len(words)


def _fields(value: dict[str, Any]) -> dict[str, Any]:
    return {re.sub(r"[\s_]", "", str(k).lower()): v for k, v in value.items()}


def _times(fields: dict[str, Any]) -> tuple[float | None, float | None]:
    return _first(fields, _START_KEYS), _first(fields, _END_KEYS)


def _text(fields: dict[str, Any]) -> str:
    found = next((fields[k] for k in _TEXT_KEYS if isinstance(fields.get(k), str)), "")
    return str(found)


def _first(fields: dict[str, Any], keys: tuple[str, ...]) -> float | None:
    for key in keys:
        seconds = parse_time(fields.get(key))
        if seconds is not None:
            return seconds
    return None


def voiced_spans(chunk: Chunk, speech_span: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    """The chunk's VAD speech as [lo, hi) indices of its speech tokens (the span covers the chunk
    evenly); () when the chunk lists none (then all of it counts as speech)."""
    length = speech_span[1] - speech_span[0]
    per_second = length / chunk.duration if chunk.duration > 0 else 0.0
    spans = (
        (
            max(math.floor((s.start - chunk.start) * per_second), 0),
            min(math.ceil((s.end - chunk.start) * per_second), length),
        )
        for s in chunk.speech
    )
    return tuple(sorted((lo, hi) for lo, hi in spans if lo < hi))


def speech_anchor(tokenizer: Any, tokens_per_second: float) -> SpeechAnchor:
    """A fresh `TimestampTracker` per row, sharing one token-text cache."""
    text = TokenText(tokenizer)
    return lambda: TimestampTracker(text, tokens_per_second)
