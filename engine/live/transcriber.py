"""Live transcription: closed speech segments in, transcript lines out, on one worker thread.

Contract of `LiveTranscriber(backend, speakers, on_line)`:
- `submit(segment, samples)` queues a closed VAD segment (absolute seconds) with its 16 kHz audio
  (T,) float32. The queue is unbounded: a slow CPU makes it grow, never drops a segment; it is
  decoded in order, and the worker catches up once the meeting ends (`drain`).
- The worker loads the backend's model (when it has `load()`) and, on a helper thread at the same
  time, the speaker encoder, as soon as it starts, so the first line waits for them as little as
  possible. An encoder that will not load is reported once; lines then carry no speaker.
  `ready` says when both have loaded (or failed to): until then a UI says "loading models".
- Each segment goes to the backend as one chunk; every backend segment becomes a `LiveLine` with
  absolute times (words too) and, when `speakers` is given, the segment's provisional speaker
  (`OnlineSpeakers.assign`). `on_line(line)` is called from the worker thread.
- `behind_seconds(now)`: how long the oldest turn still without its line has been over: `now`
  (seconds recorded) minus the end of the oldest segment not yet decoded (or being decoded), 0
  when nothing waits — the lag a user sees, turn end to line; `backlog_seconds`: audio queued.
- `has_spare_time(now)`: nothing waits, and the worker has been free (since `free_since`) for at
  least half as long as its latest decode took (`last_decode_seconds`): one more segment can be
  decoded at once without holding up the next. A worker that is free only for moments between
  segments is near its limit, and every segment costs a whole decode (whisper's 30 s window).
- A backend failure on one segment is reported through `on_error(exc)` and the next segment still
  runs; a model that will not load is reported once and live lines stop (the recording goes on,
  and the full pipeline after it reports the problem again).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.backends.base import Backend
from engine.errors import ModelLoadError
from engine.live.online_speakers import OnlineSpeakers
from engine.types import Chunk, Recording, SpeechSegment, Utterance, Word

RATE = 16000


@dataclass(frozen=True, slots=True)
class LiveLine:
    utterance: Utterance  # absolute seconds, provisional speaker id ("S1"…) or None
    segment: SpeechSegment  # the VAD segment it came from
    ready_at: float  # time.monotonic() when the line was ready


LineFn = Callable[[LiveLine], None]
ErrorFn = Callable[[Exception], None]


class LiveTranscriber:
    def __init__(self, backend: Backend, speakers: OnlineSpeakers | None, on_line: LineFn,
                 on_error: ErrorFn | None = None) -> None:  # fmt: skip
        if backend.sample_rate != RATE:
            raise ValueError(f"live transcription needs a {RATE} Hz backend, not {backend.sample_rate}")
        self.backend = backend
        self.speakers = speakers
        self.on_line = on_line
        self.on_error = on_error
        self.lines_done = 0
        self.segments_done = 0
        self.failed: Exception | None = None
        self.free_since = time.monotonic()  # when the queue last ran empty
        self.last_decode_seconds = 0.0
        self._queue: queue.Queue[tuple[SpeechSegment, np.ndarray] | None] = queue.Queue()
        self._waiting: list[SpeechSegment] = []  # submitted, not decoded yet (oldest first)
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self._cancel = threading.Event()
        self._speakers_ready = threading.Event()
        self._backend_ready = threading.Event()
        self._thread = threading.Thread(target=self._work, daemon=True, name="live-transcriber")
        self._thread.start()

    def submit(self, segment: SpeechSegment, samples: np.ndarray) -> None:
        with self._lock:
            self._waiting.append(segment)
            self._idle.clear()
        self._queue.put((segment, samples))

    @property
    def backlog_seconds(self) -> float:
        with self._lock:
            return sum(s.duration for s in self._waiting)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._waiting)

    @property
    def ready(self) -> bool:
        """The models are loaded (or failed to load): lines no longer wait for them."""
        return self._backend_ready.is_set() and self._speakers_ready.is_set()

    def behind_seconds(self, now: float) -> float:
        with self._lock:
            return max(0.0, now - self._waiting[0].end) if self._waiting else 0.0

    def has_spare_time(self, now: float) -> bool:
        with self._lock:
            return not self._waiting and now - self.free_since >= self.last_decode_seconds / 2

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every submitted segment is decoded; False if `timeout` ran out first."""
        return self._idle.wait(timeout)

    def close(self, wait: bool = True) -> None:
        """Stop the worker (after the queue when `wait`, else after the current segment)."""
        if not wait:
            self._cancel.set()
        self._queue.put(None)
        self._thread.join()

    def _warm_up(self) -> None:
        """Load the models before the first segment closes: the speaker encoder on a helper thread
        while the backend (when it has `load()`) loads here."""
        threading.Thread(target=self._load_speakers, daemon=True, name="live-speakers-load").start()
        try:
            load = getattr(self.backend, "load", None)
            if callable(load):
                load()
        except Exception as exc:  # a model that will not load: reported, live lines stop
            self.failed = exc
            self._report(exc)
        finally:
            self._backend_ready.set()

    def _load_speakers(self) -> None:
        try:
            if self.speakers is not None:
                self.speakers.load()
        except Exception as exc:  # no encoder: lines go on without provisional speakers
            self.speakers = None
            self._report(exc)
        finally:
            self._speakers_ready.set()

    def _work(self) -> None:
        self._warm_up()
        while (item := self._queue.get()) is not None:
            segment, samples = item
            began = time.monotonic()
            if not self._cancel.is_set() and self.failed is None:
                self._decode(segment, samples)
            with self._lock:
                self.last_decode_seconds = time.monotonic() - began
                self._waiting.remove(segment)
                if not self._waiting:
                    self.free_since = time.monotonic()
                    self._idle.set()

    def _decode(self, segment: SpeechSegment, samples: np.ndarray) -> None:
        try:
            lines = self._lines(segment, samples)
        except ModelLoadError as exc:
            self.failed = exc
            self._report(exc)
            return
        except Exception as exc:  # one bad segment must not end live transcription
            self._report(exc)
            return
        self.segments_done += 1
        for line in lines:
            self.lines_done += 1
            try:
                self.on_line(line)
            except Exception as exc:  # a reader that cannot take it (a closed pipe) must not end the worker
                self._report(exc)

    def _lines(self, segment: SpeechSegment, samples: np.ndarray) -> list[LiveLine]:
        duration = len(samples) / RATE
        chunk = Chunk(0, 0.0, duration, (SpeechSegment(0.0, duration),))
        results = list(self.backend.transcribe(Recording(samples, RATE), [chunk], self._cancel))
        texts = [s for r in results for s in r.segments if s.text.strip()]
        if not texts:
            return []
        self._speakers_ready.wait()
        speaker = self.speakers.assign(samples) if self.speakers is not None else None
        at, ready = segment.start, time.monotonic()
        return [
            LiveLine(Utterance(at + s.start, at + s.end, s.text.strip(), speaker, _shift(s.words, at)),
                     segment, ready)
            for s in texts
        ]

    def _report(self, exc: Exception) -> None:
        if self.on_error is not None:
            self.on_error(exc)


def _shift(words: tuple[Word, ...], by: float) -> tuple[Word, ...]:
    return tuple(Word(by + w.start, by + w.end, w.text, w.probability) for w in words)
