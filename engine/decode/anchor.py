"""Where `speech-anchor` may evict up to, and how much speech any policy evicted before it was written.

A row's transcript reader (`api.AnchorTracker`) reports each segment as it closes, with the words
its text adds. `GuardedAnchor` turns that stream into an anchor, a speech index that nothing the
transcript will still need lies before. It moves only as far as two independent signals agree:
the times the model writes, and how far the words written so far can have reached (at the
slowest plausible pace, `word_rate` words per second of the speech the VAD found: `voiced.Voiced`):

- it anchors on segment *Starts*, never Ends: the minimum Start over the last `RECENT` accepted
  segments (a start-ordered transcript never needs audio before it, even when segments overlap);
  until `RECENT` segments are accepted it stays at the chunk's start;
- plausibility guards reject a segment whose Start lies outside the chunk, whose End is past the
  chunk's end (by more than `END_SLACK` tokens) or before its Start;
- it never passes what the words written can have reached; a plausible Start more than
  `TEXT_SLACK` tokens past what the words *before* it can have reached means the times run ahead
  of the text (an offset, a wild Start): the anchor stops for good (`stopped`; the row reports it);
- it moves forward only, at most `COVER` speech tokens per output token and at most `per_word`
  tokens per new word written since it last moved (a jump the text could not have covered is
  clipped, never taken whole; a loop or a restart, whose repeated text adds no words, moves nothing);
- the eviction rule keeps `look_back` tokens before it (`layout.SpeechRule`), and a step uses the
  anchor read from the tokens *before* the one it feeds (a one-step lag), so the next step can be
  planned before this step's token is read.

Every guard can only evict less. The reader also meters harm per row (`Harm`): speech tokens a step
had already evicted (in any evicting layer group) either inside a segment it completed, as written,
or past where the words written by then reach at the row's own pace (its words over the chunk's
voiced speech): "speech evicted before it was confirmed transcribed", each token counted once. The
second count does not trust the written times, so it sees losses they hide. When the row ends, the
segment still open (cut off by the budget, an EOS or a loop; when the tracker can tell: `open()`)
counts too, against what the row's last step kept.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.decode.api import AnchorTracker, SegmentTimes
from engine.decode.layout import ANCHOR_RECENT
from engine.decode.voiced import Voiced

RECENT = ANCHOR_RECENT  # segments whose minimum Start is the anchor (rows are planned with it: layout.py)
COVER = 4.0  # speech tokens (≈ 0.53 s) one output token may move the anchor at most
END_SLACK = 8  # speech tokens an End may lie past the chunk's end (≈ 1 s)
TEXT_SLACK = 23  # speech tokens (≈ 3 s) a Start may lie past what the words before it can reach

# speech kept at a step: (sinks, lo, hi) per evicting layer group, for step j under anchor a
KeptAt = Callable[[int, int], Sequence[tuple[int, int, int]]]


class GuardedAnchor:
    """One row's anchor (−1: none yet) from the segments its transcript completes."""

    def __init__(self, speech_len: int, voiced: Voiced | None = None, per_word: float = math.inf) -> None:
        self.speech_len = speech_len
        self.voiced = voiced if voiced is not None else Voiced(speech_len)
        self.per_word = per_word  # speech tokens one written word may stand for at most
        self.value = -1
        self.recent: deque[float] = deque(maxlen=RECENT)
        self.moved_at = 0  # output tokens written when the anchor last moved
        self.words = 0  # words the transcript has written (repeats not counted)
        self.words_at = 0  # words written when the anchor last moved
        self.stopped = False  # its times ran ahead of its text: the anchor moves no more

    def plausible(self, segment: SegmentTimes) -> bool:
        start, end = segment.start, segment.end
        if start is None or not 0 <= start < self.speech_len:
            return False
        return end is None or start <= end <= self.speech_len + END_SLACK

    @property
    def checks_text(self) -> bool:
        return not math.isinf(self.per_word)

    def text_reach(self) -> int:
        """The furthest speech index the words written so far can have reached."""
        if not self.checks_text:
            return self.speech_len
        return self.voiced.reach(self.words * self.per_word)

    def read(self, segments: Sequence[SegmentTimes], written: int) -> int:
        """The anchor after `segments` closed, with `written` output tokens written so far."""
        for segment in segments:
            if self.plausible(segment):
                if segment.start > self.text_reach() + TEXT_SLACK:  # type: ignore[operator]
                    self.stopped = True
                self.recent.append(float(segment.start))  # type: ignore[arg-type]
            self.words += segment.words
        if self.stopped or len(self.recent) < RECENT:
            return self.value
        floor = max(self.value, 0)
        reach = floor + math.floor(COVER * (written - self.moved_at))
        said = floor + self.per_word * (self.words - self.words_at) if self.checks_text else math.inf
        target = min(math.floor(min(self.recent)), self.text_reach(), reach, said)
        if target > self.value:
            self.value, self.moved_at, self.words_at = int(target), written, self.words
        return self.value


@dataclass(frozen=True, slots=True)
class Harm:
    """Speech a row evicted before it was confirmed transcribed (`RowReader.harm`)."""

    lost_tokens: int
    speech_tokens: int

    @property
    def fraction(self) -> float:
        return self.lost_tokens / self.speech_tokens if self.speech_tokens else 0.0


class RowReader:
    """A row's transcript reader, its anchor, and its harm meter.

    `feed(token, j)` reads output token `j + 1` (chosen by step `j`); `anchor_before(k)` is the anchor
    read from the tokens before output `k`, the one the step feeding output `k` uses.
    """

    def __init__(
        self,
        tracker: AnchorTracker,
        speech_len: int,
        kept_at: KeptAt | None,
        voiced: Voiced | None = None,
        per_word: float = math.inf,
    ) -> None:
        self.tracker, self.kept_at = tracker, kept_at
        self.voiced = voiced if voiced is not None else Voiced(speech_len)
        self.anchor = GuardedAnchor(speech_len, self.voiced, per_word)
        self.anchors: list[int] = []  # anchor after each output token read
        self.lost = np.zeros(speech_len, dtype=bool)  # (S,) evicted inside a span before it was written
        self.gone_words = np.full(
            speech_len, -1, dtype=np.int64
        )  # (S,) words written when first seen evicted

    def prime(self, tokens: Sequence[int]) -> None:
        """Read a resumed row's output so far, as if it had been decoded here (output k: step k − 1)."""
        for k, token in enumerate(tokens):
            self.feed(token, k - 1)

    def feed(self, token: int, step: int) -> None:
        segments = self.tracker.feed([token])
        written = len(self.anchors) + 1
        if segments and self.kept_at is not None:
            self._measure(segments, step)
        self.anchors.append(self.anchor.read(segments, written))

    def close(self) -> None:
        """The row ended: the segment its tracker still has open (`open()`, if it has one) is
        measured against the last step that chose one of the row's tokens."""
        found = getattr(self.tracker, "open", None)
        segment = found() if found is not None else None
        if self.kept_at is not None:
            self._measure([segment] if segment is not None else [], len(self.anchors) - 2)

    def anchor_before(self, k: int) -> int:
        return self.anchors[k - 1] if 0 < k <= len(self.anchors) else -1

    @property
    def stopped(self) -> bool:
        """Whether the row's times ran ahead of its text, so that its anchor stopped."""
        return self.anchor.stopped

    @property
    def harm(self) -> Harm:
        return Harm(int((self.lost | self.unconfirmed()).sum()), self.lost.size)

    def unconfirmed(self) -> np.ndarray:
        """(S,) speech evicted before the text confirmed it transcribed: past where the words
        written by then reach at the row's own pace (its words over the chunk's voiced speech)."""
        gone = self.gone_words >= 0
        if not gone.any():
            return gone
        pace = self.voiced.total / self.anchor.words if self.anchor.words else math.inf
        reached = self.voiced.first(np.minimum(self.gone_words * pace, self.voiced.total))
        return gone & (np.arange(self.lost.size) >= reached)

    def _measure(self, segments: Sequence[SegmentTimes], step: int) -> None:
        """Mark what step `step` no longer held: inside each completed segment, and anywhere not
        seen evicted before (with the words written by then)."""
        if self.kept_at is None:
            return
        size = self.lost.size
        index = np.arange(size)
        gone = np.zeros(size, dtype=bool)
        for sinks, lo, hi in self.kept_at(step, self.anchor_before(step)):
            gone |= (index >= sinks) & ((index < lo) | (index >= hi))
        self.gone_words[gone & (self.gone_words < 0)] = self.anchor.words
        for segment in segments:
            span = _span(segment, size)
            if span is not None:
                self.lost[span[0] : span[1]] |= gone[span[0] : span[1]]


def _span(segment: SegmentTimes, size: int) -> tuple[int, int] | None:
    """A segment's speech indices, clipped to the chunk (None: it names no audio in the chunk)."""
    times = [t for t in (segment.start, segment.end) if t is not None]
    if not times:
        return None
    first, last = min(times), max(times)
    lo, hi = max(math.floor(first), 0), min(max(math.ceil(last), math.floor(first) + 1), size)
    return (lo, hi) if lo < hi else None


class RowReaders:
    """The readers of a batch's rows (kept in row order as rows move), for a policy that reads the
    transcript: `speech-anchor` to anchor, every speech-evicting policy to measure harm."""

    def __init__(self, rows: int, make: Callable[[], AnchorTracker], word_rate: float = 0.0) -> None:
        self.make, self.word_rate = make, word_rate  # fewest words per second of speech (0: no check)
        self.rows: list[RowReader | None] = [None] * rows

    def reader(
        self, speech_len: int, kept_at: KeptAt, prefix: Sequence[int], voiced: Sequence[tuple[int, int]] = ()
    ) -> RowReader:
        """A new row's reader (`voiced`: where its chunk holds speech), having read its output so far."""
        tracker = self.make()
        per_word = tracker.tokens_per_second / self.word_rate if self.word_rate > 0 else math.inf
        found = RowReader(tracker, speech_len, kept_at, Voiced(speech_len, voiced), per_word)
        found.prime(prefix)
        return found

    def feed(self, tokens: np.ndarray, rows: np.ndarray, index: np.ndarray) -> None:
        """Rows `rows` read their new token, output `index[r]` (chosen by step `index[r] - 1`)."""
        for row in rows.tolist():
            found = self.rows[row]
            if found is not None:
                found.feed(int(tokens[row]), int(index[row]) - 1)

    def anchors(self, steps: np.ndarray, out: np.ndarray) -> None:
        """out[r] = the anchor row r's next step (feeding output `steps[r]`) uses."""
        for row, step in enumerate(steps.tolist()):
            found = self.rows[row]
            if found is not None:
                out[row] = found.anchor_before(step)

    def close(self, row: int) -> None:
        """Row `row` ended with its output: its open segment counts (`RowReader.close`)."""
        found = self.rows[row]
        if found is not None:
            found.close()

    def lost(self, row: int) -> int | None:
        found = self.rows[row]
        return None if found is None else found.harm.lost_tokens

    def stopped(self, row: int) -> bool:
        found = self.rows[row]
        return found is not None and found.stopped

    def release(self, row: int, moved: int | None) -> None:
        """Row `row` left; the row `moved` (if any) took its place."""
        self.rows[row] = self.rows[moved] if moved is not None else None
        if moved is not None:
            self.rows[moved] = None
