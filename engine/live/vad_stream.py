"""Voice-activity detection on a stream: 16 kHz audio in as it arrives, closed speech segments out.

Contract of `StreamingVad(config, max_seconds)`:
- `push(samples, may_cut=True)` takes the next 16 kHz float32 samples (any length) and returns the
  speech segments that closed with them (absolute seconds from the first sample pushed); `flush()` closes
  the open one at the end of the stream.
- The probabilities are silero's (`SileroVad`'s model and frames, its LSTM state carried from frame
  to frame, so they equal the offline run's); the hysteresis is `engine.audio.speech_runs`'s: speech
  starts at a frame ≥ `threshold` and ends at the first frame below `threshold - 0.15` followed by
  `min_silence_ms` without speech; segments of `min_speech_ms` or less are dropped; each is padded
  by `speech_pad_ms`. A segment is closed as soon as its silence is long enough, so a line can be
  decoded while the meeting goes on.
- `silent_since`: where the open segment's speech stopped, while the silence that will close it is
  still shorter than `min_silence_ms` (a turn that ended but has no line yet).
- A pause is a silence inside the open segment too short to close it: from its first frame below
  `threshold - 0.15` to the next frame ≥ `threshold`, at least `pause_ms` long (the offline
  chunker's pauses). With `cut_after` set, a segment longer than `cut_after` seconds is cut at its
  longest pause (the later one of two as long) as soon as it has one, speech goes on (a silence
  may close it without a cut) and `push` is told it
  `may_cut` (the live session says so while its decoder has spare time: a piece cut while it
  is busy would only queue, and each piece costs a whole decode): the piece before it closes
  (padded, like a segment), the rest continues from the pause's end. Two turns with too short a
  silence between them to close a segment so become two lines, the first shown while the second
  speaker goes on, instead of one line when the second turn ends.
- A segment reaching `max_seconds` without a pause is cut at its quietest frame of the last third
  (the lowest speech probability) and the rest continues as a new segment; the decoder never gets
  more than `max_seconds` at once.
"""

from __future__ import annotations

import numpy as np

from engine.audio.vad import CONTEXT, FRAME, VAD_RATE, SileroVad, VadConfig, _frames
from engine.types import SpeechSegment

MAX_SECONDS = 15.0
Pause = tuple[int, int]  # (first silent frame, first speech frame after it)


class StreamingVad:
    def __init__(self, config: VadConfig | None = None, max_seconds: float = MAX_SECONDS,
                 detector: SileroVad | None = None, cut_after: float | None = None) -> None:  # fmt: skip
        if max_seconds <= 1.0:
            raise ValueError(f"the longest live segment must exceed 1 s, got {max_seconds}")
        if cut_after is not None and not 0.0 < cut_after < max_seconds:
            raise ValueError(f"a segment is cut at a pause after (0, {max_seconds}) s, got {cut_after}")
        self.config = config or VadConfig()
        self.max_frames = int(max_seconds * VAD_RATE / FRAME)
        self.cut_frames = None if cut_after is None else int(cut_after * VAD_RATE / FRAME)
        self._vad = detector or SileroVad(self.config)
        self._h = np.zeros((1, 1, 128), np.float32)
        self._c = np.zeros((1, 1, 128), np.float32)
        self._context = np.zeros(CONTEXT, np.float32)
        self._pending = np.zeros(0, np.float32)
        self._frame = 0  # index of the next frame to score
        self._probs: list[float] = []  # probabilities of the open segment's frames
        self._start: int | None = None  # first frame of the open segment
        self._silent_from: int | None = None
        self._pauses: list[Pause] = []  # the open segment's pauses, in order
        cfg = self.config
        self._low = max(cfg.threshold - 0.15, 0.01)
        self._min_silence = cfg.min_silence_ms * VAD_RATE / 1000 / FRAME  # frames
        self._min_speech = cfg.min_speech_ms * VAD_RATE / 1000 / FRAME
        self._min_pause = cfg.pause_ms * VAD_RATE / 1000 / FRAME
        self._pad = cfg.speech_pad_ms / 1000
        self._last_end = 0.0  # where the previous segment ended (pads never overlap it)

    @property
    def seconds(self) -> float:
        """Audio scored so far."""
        return self._frame * FRAME / VAD_RATE

    @property
    def in_speech(self) -> bool:
        return self._start is not None

    @property
    def silent_since(self) -> float | None:
        """Where the open segment's speech stopped (seconds), while its silence is too short yet to
        close it; None when speech goes on or no segment is open."""
        if self._start is None or self._silent_from is None:
            return None
        return self._silent_from * FRAME / VAD_RATE

    def push(self, samples: np.ndarray, may_cut: bool = True) -> list[SpeechSegment]:
        self._pending = np.concatenate((self._pending, samples.astype(np.float32, copy=False)))
        whole = len(self._pending) // FRAME * FRAME
        if not whole:
            return []
        block, self._pending = self._pending[:whole], self._pending[whole:]
        return [s for p in self._score(block) for s in self._step(p, may_cut)]

    def flush(self) -> list[SpeechSegment]:
        """Close the open segment at the end of the stream."""
        out = []
        if self._pending.size:
            out += self.push(np.zeros(FRAME - len(self._pending), np.float32))
        if self._start is not None and self._frame - self._start > self._min_speech:
            out.append(self._close(self._frame))
        self._start = self._silent_from = None
        return out

    def _score(self, block: np.ndarray) -> np.ndarray:
        session = self._vad._load()
        frames = _frames(block, self._context)  # (n, CONTEXT + FRAME)
        self._context = frames[-1, -CONTEXT:].copy()
        probs, self._h, self._c = session.run(
            ["speech_probs", "hn", "cn"], {"input": frames, "h": self._h, "c": self._c}
        )
        return np.asarray(probs, np.float32).reshape(-1)

    def _step(self, p: float, may_cut: bool = True) -> list[SpeechSegment]:
        """Advance one frame of probability `p`; the segments this frame closed."""
        i = self._frame
        self._frame += 1
        out: list[SpeechSegment] = []
        if self._start is not None:
            self._probs.append(float(p))
        if p >= self.config.threshold:
            if self._start is not None and self._silent_from is not None:
                self._note_pause(self._silent_from, i)
            self._silent_from = None
            if self._start is None:
                self._start, self._probs, self._pauses = i, [float(p)], []
        elif p < self._low and self._start is not None:
            self._silent_from = self._silent_from if self._silent_from is not None else i
            if i - self._silent_from >= self._min_silence:
                if self._silent_from - self._start > self._min_speech:
                    out.append(self._close(self._silent_from))
                self._start = self._silent_from = None
        if may_cut and self._pauses and self._silent_from is None and self._over_cut_length(i + 1):
            out.append(self._cut_at_pause())
        if self._start is not None and i + 1 - self._start >= self.max_frames:
            out.append(self._cut())
        return out

    def _note_pause(self, silent_from: int, speech_at: int) -> None:
        if speech_at - silent_from >= self._min_pause:
            self._pauses.append((silent_from, speech_at))

    def _over_cut_length(self, end: int) -> bool:
        return self._start is not None and self.cut_frames is not None and end - self._start > self.cut_frames

    def _cut_at_pause(self) -> SpeechSegment:
        """Close the open segment at its longest pause; the rest goes on from the pause's end."""
        assert self._start is not None
        silent_from, speech_at = max(self._pauses, key=lambda q: (q[1] - q[0], q[0]))
        segment = self._close(silent_from)
        self._probs = self._probs[speech_at - self._start :]
        self._pauses = [q for q in self._pauses if q[0] >= speech_at]
        self._start = speech_at
        return segment

    def _cut(self) -> SpeechSegment:
        """Close a segment that reached the longest length at its quietest late frame."""
        assert self._start is not None
        tail = len(self._probs) // 3
        at = self._start + len(self._probs) - tail + int(np.argmin(self._probs[-tail:]))
        segment = self._close(at, pad=False)
        rest = self._probs[at - self._start :]
        self._start, self._probs, self._silent_from, self._pauses = at, rest, None, []
        return segment

    def _close(self, end_frame: int, pad: bool = True) -> SpeechSegment:
        assert self._start is not None
        start = max(self._start * FRAME / VAD_RATE - self._pad, self._last_end, 0.0)
        end = end_frame * FRAME / VAD_RATE + (self._pad if pad else 0.0)
        self._last_end = end
        return SpeechSegment(start, max(end, start))
