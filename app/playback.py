"""Audio playback through sounddevice, imported lazily so the app runs without any sound system.

- `PlaybackSource` (pure numpy) reads a recording from a position at a speed (0.5–2×, by linear
  interpolation, so pitch follows speed); it is what the audio callback calls.
- `unavailable_reason()` says, in words, why playback cannot work here (PortAudio missing: OSError
  at import; no output device: PortAudioError/ValueError), or None when it can.
- `Player` plays one recording on the default output device. Its position is read from any thread;
  the view polls it. `play`, `pause` and `seek` return at once; errors opening the device raise
  `PlaybackError` with a message for the status bar. Its one stream is opened ahead by `prepare()`
  (the first open of a process takes 0.1–0.3 s) and kept until `close()`. Pausing aborts the stream
  instead of draining it (a drain waits out the device's buffer, up to a second on PulseAudio) and
  moves the read head back by what was buffered but not yet heard, so playing again resumes where
  the sound stopped. A stream that ended by itself before the end of the sound (the sound server
  went away) is dropped at the next `pause` or `play`, which opens a new one or raises
  `PlaybackError` (starting the dead one again would wait forever).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import numpy as np

MIN_SPEED, MAX_SPEED = 0.5, 2.0


class PlaybackError(Exception):
    """The audio device could not be opened or failed while playing."""


class PlaybackSource:
    """A read head over `samples` (float32, (T,)) that advances `speed` samples per output frame."""

    def __init__(self, samples: np.ndarray, sample_rate: int, start: float = 0.0, speed: float = 1.0) -> None:
        self.samples = samples
        self.sample_rate = sample_rate
        self._pos = 0.0  # fractional sample index
        self.speed = speed
        self.seek(start)

    @property
    def speed(self) -> float:
        return self._speed

    @speed.setter
    def speed(self, value: float) -> None:
        if not MIN_SPEED <= value <= MAX_SPEED:
            raise ValueError(f"speed must be between {MIN_SPEED} and {MAX_SPEED}")
        self._speed = float(value)

    @property
    def position(self) -> float:
        return self._pos / self.sample_rate

    @property
    def finished(self) -> bool:
        return self._pos >= len(self.samples) - 1

    def seek(self, seconds: float) -> None:
        self._pos = min(max(seconds * self.sample_rate, 0.0), float(max(len(self.samples) - 1, 0)))

    def read(self, frames: int) -> np.ndarray:
        """The next `frames` output samples (zeros past the end), float32 (frames,).

        Interpolates only the samples this read covers, so its cost is O(frames) whatever the
        length of the recording (the audio callback calls it every few milliseconds)."""
        last = len(self.samples) - 1
        out = np.zeros(frames, np.float32)
        if last > 0:
            idx = self._pos + np.arange(frames) * self._speed  # (frames,) fractional sample indices
            n = int(np.count_nonzero(idx < last))  # idx grows: the samples inside are a prefix
            if n:
                lo = idx[:n].astype(np.int64)  # (n,) floor, idx ≥ 0
                frac = (idx[:n] - lo).astype(np.float32)
                a, b = self.samples[lo], self.samples[lo + 1]
                out[:n] = a + (b - a) * frac
        self._pos = min(self._pos + frames * self._speed, float(max(last, 0)))
        return out


def _sounddevice() -> Any:
    import sounddevice  # lazy: raises OSError when the PortAudio library is missing

    return sounddevice


def unavailable_reason() -> str | None:
    """Why playback cannot work on this machine, or None when an output device exists."""
    try:
        sd = _sounddevice()
    except OSError:
        return "Playback is unavailable: the PortAudio library is not installed (libportaudio2)."
    except ImportError:
        return "Playback is unavailable: the sounddevice package is not installed."
    try:
        sd.query_devices(kind="output")
    except (sd.PortAudioError, ValueError):
        return "Playback is unavailable: no audio output device was found."
    return None


class Player:
    """Plays a recording on the default output device, through one stream kept for its life.

    Opening the first stream of a process takes 0.1–0.3 s (PortAudio meets the sound server), so
    `prepare()` opens it on a thread of its own when a recording is loaded; `play` then only
    starts it (about a millisecond) and `pause` aborts it, keeping it open. Every call on the
    stream holds `_device`, so a `play` during the opening waits for it instead of opening a
    second one."""

    def __init__(self, samples: np.ndarray, sample_rate: int) -> None:
        self._source = PlaybackSource(samples, sample_rate)
        self._lock = threading.Lock()  # the read head: the audio callback and the caller
        self._device = threading.Lock()  # the stream: opening, starting, aborting, closing
        self._stream: Any = None
        self._ran_out = False  # the callback stopped the stream at the end of the sound

    @property
    def position(self) -> float:
        with self._lock:
            return self._source.position

    @property
    def playing(self) -> bool:
        stream = self._stream
        return stream is not None and bool(stream.active)

    @property
    def speed(self) -> float:
        return self._source.speed

    def set_speed(self, speed: float) -> None:
        with self._lock:
            self._source.speed = speed

    def seek(self, seconds: float) -> None:
        with self._lock:
            self._source.seek(seconds)

    def prepare(self) -> None:
        """Open the stream in the background, so that the first `play` does not wait for it."""
        threading.Thread(target=self._open_quietly, name="murmur-playback-open", daemon=True).start()

    def play(self, at: float | None = None) -> None:
        """Start playing (from `at` seconds if given); PlaybackError if the device fails."""
        self.pause()
        if at is not None:
            self.seek(at)
        sd = _sounddevice()
        with self._device:
            try:
                stream = self._opened()
                self._ran_out = False
                stream.start()
            except (sd.PortAudioError, ValueError, OSError) as exc:
                self._drop()
                raise PlaybackError(f"Could not play audio: {exc}") from exc

    def pause(self) -> None:
        self._forget_if_dead()
        with self._device:
            stream = self._stream
            if stream is None:
                return
            try:
                unheard = float(stream.latency) if stream.active else 0.0
                stream.abort()  # drops the buffer at once; stop() would play it out first
            except Exception:  # a vanished device must not take the app down
                self._drop()
                return
        with self._lock:
            self._source.seek(max(self._source.position - unheard * self._source.speed, 0.0))

    def close(self) -> None:
        """Stop and let the device go; a later `play` opens it again."""
        self.pause()
        with self._device:
            self._drop()

    def _opened(self) -> Any:
        """The stream, opened if it is not yet (the caller holds `_device`)."""
        if self._stream is None:
            self._stream = _sounddevice().OutputStream(
                samplerate=self._source.sample_rate, channels=1, dtype="float32", callback=self._callback
            )
        return self._stream

    def _forget_if_dead(self) -> None:
        """Drop a stream that ended by itself before the end of the sound (its sound server went
        away): starting it again would wait forever; a new one opens or says why it cannot."""
        with self._device:
            stream = self._stream
            if stream is None or stream.active or stream.stopped:
                return
            if not self._ran_out:  # not the end of the sound, even if a seek moved the head since
                self._drop()

    def _open_quietly(self) -> None:
        with self._device:
            try:
                self._opened()
            except Exception:  # play() opens it again and says why it cannot
                self._stream = None

    def _drop(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            with contextlib.suppress(Exception):  # a vanished device: nothing left to let go
                stream.close()

    def _callback(self, outdata: np.ndarray, frames: int, _time: Any, _status: Any) -> None:
        with self._lock:
            outdata[:, 0] = self._source.read(frames)
            done = self._source.finished
        if done:
            self._ran_out = True
            raise _sounddevice().CallbackStop
