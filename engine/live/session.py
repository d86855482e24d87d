"""One live recording: capture to FLAC, and (optionally) transcription while it happens.

Contract of `LiveSession(source, path, backend, config, on_line)`:
- `start()` designs the resampler's filter (a few milliseconds of numpy for 44.1 kHz: on the
  thread that starts the session, so a window can start it off its own thread with the device),
  then starts the `CaptureStream`; every block written to the file is also resampled to
  16 kHz and pushed into a `StreamingVad`; each closed speech segment (absolute seconds in the
  recording, pauses excluded) is recorded in `segments`, passed to `on_segment`, and — with a
  backend — queued on a `LiveTranscriber` with its audio, whose lines reach `on_line`. After
  `stop`, `segments` are the recording's speech (what opening the file would find again), unless
  `segments_whole` is False: the live path failed, and they end there.
  A segment longer than `LiveConfig.cut_after_seconds` is cut at its longest pause (`StreamingVad`)
  while the decoder has spare time (`LiveTranscriber.has_spare_time`) and its last decode took
  less than that bound, so a turn that runs into the next with too short a silence to close a
  segment gets its line while the next speaker goes on; a decoder near its limit, or slower than
  the pieces would need, is not given the extra pieces.
  Live lines are decoded greedily (`LiveConfig.greedy`, whisper's beam 1 on the same loaded model:
  1.6× faster on the demo for +0.6 points of WER); the final run keeps the backend's beam.
  Only the audio of the open segment is kept in memory, plus what waits in the queue;
  `on_audio(samples)` sees all of it (16 kHz) for a view that draws the waveform as it grows.
- `status()` is a snapshot for a view: seconds recorded, input level, paused, how far the live
  lines trail the audio — how long the oldest turn that has ended is still without its line (turn
  end to line, what `bench/live.py` measures through a real device): a segment queued or being
  decoded, or a turn whose closing silence the VAD is still timing — and how much audio waits to
  be decoded. Audio reaches the VAD within 100 ms of its capture (the resampler releases 100 ms
  at a time).
- `stop()` (idempotent) ends the capture, closes the last segment and returns the file; `finish(timeout)` then
  waits for the queue to be decoded (the catch-up after the meeting) and stops the worker.
- A capture failure (`RecordingError`: device will not open → raised by `start`; unplugged or
  disk full → `on_error`) keeps the file up to the failure; `error` holds it. A failure of the
  live path itself (the VAD, `on_segment`, `on_audio`) stops only the live lines: `on_error` gets
  a `RuntimeError` saying so, and the recording goes on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.audio.resample import StreamingResampler
from engine.audio.vad import SileroVad, VadConfig
from engine.backends.base import Backend
from engine.errors import RecordingError
from engine.live.capture import CaptureStream
from engine.live.online_speakers import OnlineSpeakers
from engine.live.sources import AudioSource
from engine.live.transcriber import LineFn, LiveTranscriber
from engine.live.vad_stream import MAX_SECONDS, StreamingVad
from engine.types import SpeechSegment

RATE = 16000
SegmentFn = Callable[[SpeechSegment], None]
ErrorFn = Callable[[Exception], None]
AudioFn = Callable[[np.ndarray], None]  # the next 16 kHz samples (T,) of the recording


LIVE_SILENCE_MS = 300  # a line closes after this much silence (offline: 500 ms), for a short delay
CUT_AFTER_SECONDS = 4.0  # a longer segment is cut at its longest pause (bench/live.py: docs/live.md)
RELEASE_SAMPLES = RATE // 10  # the resampler hands the VAD 100 ms at a time (its default: 2 s)


@dataclass(frozen=True, slots=True)
class LiveConfig:
    vad: VadConfig = field(default_factory=lambda: VadConfig(min_silence_ms=LIVE_SILENCE_MS))
    max_segment_seconds: float = MAX_SECONDS
    cut_after_seconds: float | None = CUT_AFTER_SECONDS  # None: segments end at silences only
    speakers: bool = True  # provisional speaker labels from the GE2E encoder
    greedy: bool = True  # whisper decodes live lines with beam 1 (the final run keeps its beam)

    def __post_init__(self) -> None:
        if self.max_segment_seconds <= 1.0:
            raise ValueError("the longest live segment must exceed 1 s")
        cut = self.cut_after_seconds
        if cut is not None and not 0.0 < cut < self.max_segment_seconds:
            raise ValueError(f"live segments are cut at a pause after (0, {self.max_segment_seconds}) s, "
                             f"got {cut}")  # fmt: skip

    def streaming_vad(self, detector: SileroVad | None = None) -> StreamingVad:
        """The detector that closes live segments (`detector`'s model when given, else its own)."""
        return StreamingVad(self.vad, self.max_segment_seconds, detector, self.cut_after_seconds)

    def decoder(self, backend: Backend) -> Backend:
        """What live lines decode with: whisper's greedy variant of `backend` when `greedy`."""
        return backend.variant(beam_size=1) if self.greedy and hasattr(backend, "variant") else backend

    def may_cut(self, transcriber: LiveTranscriber | None) -> bool:
        """A piece cut now is decoded now, not queued, and the decoder keeps up with such pieces:
        its last decode took less than the cut bound (each piece, however short, costs a decode)."""
        cut = self.cut_after_seconds
        if transcriber is None or cut is None:
            return True
        return transcriber.has_spare_time(time.monotonic()) and transcriber.last_decode_seconds < cut


@dataclass(frozen=True, slots=True)
class LiveStatus:
    seconds: float  # recorded, pauses excluded
    level: float  # peak of the latest block, 0..1
    paused: bool
    behind_seconds: float  # how far the live lines trail the audio
    backlog_seconds: float  # speech waiting to be decoded
    lines: int
    loading: bool = False  # the live transcriber's models are still loading


class LiveSession:
    def __init__(self, source: AudioSource, path: Path, backend: Backend | None = None,
                 config: LiveConfig | None = None, on_line: LineFn | None = None,
                 on_segment: SegmentFn | None = None, on_error: ErrorFn | None = None,
                 on_audio: AudioFn | None = None) -> None:  # fmt: skip
        self.config = config or LiveConfig()
        self.on_audio = on_audio
        self.on_segment = on_segment
        self.on_error = on_error
        self.segments: list[SpeechSegment] = []
        self.segments_whole = True  # False once the live path failed: `segments` end there
        self.capture = CaptureStream(source, path, on_block=self._on_block, on_error=self._on_capture_error,
                                     on_listener_error=self._on_live_failure)  # fmt: skip
        self.vad = self.config.streaming_vad()
        self._resampler: StreamingResampler | None = None  # designed by `start`
        self._audio: list[np.ndarray] = []  # 16 kHz pieces from sample `_audio_from` on
        self._audio_from = 0
        self._lock = threading.Lock()
        self._stopped = False
        self.transcriber: LiveTranscriber | None = None
        if backend is not None:
            speakers = OnlineSpeakers(speaker_encoder()) if self.config.speakers else None
            self.transcriber = LiveTranscriber(self.config.decoder(backend), speakers,
                                               on_line or (lambda line: None), self._report)  # fmt: skip

    @property
    def path(self) -> Path:
        return self.capture.path

    @property
    def error(self) -> RecordingError | None:
        return self.capture.error

    def start(self) -> None:
        rate = self.capture.source.sample_rate
        self._resampler = StreamingResampler(rate, RATE, group_output=RELEASE_SAMPLES)
        try:
            self.capture.start()
        except RecordingError:
            self._close_transcriber(wait=False)
            raise

    def pause(self) -> None:
        self.capture.pause()

    def resume(self) -> None:
        self.capture.resume()

    def status(self) -> LiveStatus:
        seconds = self.capture.seconds
        t = self.transcriber
        return LiveStatus(seconds, self.capture.level, self.capture.paused, self._behind(seconds),
                          t.backlog_seconds if t else 0.0, t.lines_done if t else 0,
                          t is not None and not t.ready)  # fmt: skip

    def _behind(self, now: float) -> float:
        """Turn end to line: the oldest ended turn without its line, queued or not closed yet."""
        if self.transcriber is None:
            return 0.0
        ended = self.vad.silent_since
        closing = max(0.0, now - ended) if ended is not None else 0.0
        return max(self.transcriber.behind_seconds(now), closing)

    def stop(self) -> Path:
        """End the recording (the file is complete); the last open segment is closed and queued."""
        path = self.capture.stop()
        with self._lock:
            if not self._stopped:  # idempotent: the last segment is queued once
                self._stopped = True
                rest = self._resampler.flush() if self._resampler is not None else np.zeros(0, np.float32)
                self._take(self.vad.push(rest) + self.vad.flush())
        return path

    def finish(self, timeout: float | None = None) -> bool:
        """After `stop`: wait for the live lines to catch up; False if `timeout` ran out."""
        if self.transcriber is None:
            return True
        done = self.transcriber.drain(timeout)
        self._close_transcriber(wait=done)
        return done

    # -- capture thread ---------------------------------------------------------------------------
    def _on_block(self, block: np.ndarray, at: float) -> None:
        assert self._resampler is not None  # blocks come only after `start`
        samples = self._resampler.push(block)
        with self._lock:
            self._audio.append(samples)
            self._take(self.vad.push(samples, may_cut=self.config.may_cut(self.transcriber)))
        if self.on_audio is not None:
            self.on_audio(samples)

    def _take(self, closed: list[SpeechSegment]) -> None:
        for segment in closed:
            self.segments.append(segment)
            if self.on_segment is not None:
                self.on_segment(segment)
            if self.transcriber is not None:
                self.transcriber.submit(segment, self._slice(segment))
            self._trim(round(segment.end * RATE))

    def _slice(self, segment: SpeechSegment) -> np.ndarray:
        audio = np.concatenate(self._audio) if len(self._audio) != 1 else self._audio[0]
        self._audio = [audio]
        a = max(0, round(segment.start * RATE) - self._audio_from)
        b = max(a, round(segment.end * RATE) - self._audio_from)
        return audio[a:b].copy()

    def _trim(self, upto: int) -> None:
        if not self._audio or upto <= self._audio_from:
            return
        audio = np.concatenate(self._audio)
        cut = min(upto - self._audio_from, len(audio))
        self._audio, self._audio_from = [audio[cut:]], self._audio_from + cut

    def _on_capture_error(self, error: RecordingError) -> None:
        self._report(error)

    def _on_live_failure(self, exc: Exception) -> None:
        self.segments_whole = False
        self._report(RuntimeError(f"live lines stopped on an error ({type(exc).__name__}: {exc})"))

    def _report(self, exc: Exception) -> None:
        if self.on_error is not None:
            self.on_error(exc)

    def _close_transcriber(self, wait: bool) -> None:
        if self.transcriber is not None:
            self.transcriber.close(wait)


def speaker_encoder() -> object:
    """The GE2E encoder provisional speakers are found with (loaded on first use)."""
    from engine.speakers.embedding import SpeakerEncoder

    return SpeakerEncoder()
