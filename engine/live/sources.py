"""Where live audio comes from: a sound device through PortAudio, or a file played at real-time speed.

An `AudioSource` calls `deliver(block)` with mono float32 blocks (T,) from its own thread and
`fail(error)` once if it cannot go on (device unplugged, file damaged). `start` raises
`RecordingError` when the device will not open. The callbacks must return quickly: the
PortAudio callback only hands the block on.

- `MicSource(device)`: a sounddevice `InputStream` (the device's default rate unless given);
  PortAudio's status flags (overflow) are counted in `overflows`.
- `FileSource(path, speed)`: decodes a WAV/FLAC/OGG file block by block (soundfile) at its own
  rate and delivers each block when its time comes (`speed` 1 = real time); for tests, the
  benchmark and demos, through exactly the same capture path as a microphone. A file damaged
  half-way fails there, like a device unplugged mid-meeting.
`list_devices()` names the input devices sounddevice sees.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from engine.errors import RecordingError

Deliver = Callable[[np.ndarray], None]
Fail = Callable[[Exception], None]
BLOCK_SECONDS = 0.1


class AudioSource(Protocol):
    sample_rate: int
    name: str

    def start(self, deliver: Deliver, fail: Fail) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True, slots=True)
class InputDevice:
    index: int
    name: str
    channels: int
    default_rate: int
    is_default: bool = False


NO_MICROPHONE = ("No microphone was found. Connect one, or check that the sound system (PulseAudio or "
                 "PipeWire) is running and lets this program record, then try again.")


def list_devices() -> list[InputDevice]:
    """The input devices PortAudio sees (empty when PortAudio is missing)."""
    try:
        import sounddevice as sd

        default = sd.default.device[0]
        return [
            InputDevice(i, d["name"], d["max_input_channels"], int(d["default_samplerate"]), i == default)
            for i, d in enumerate(sd.query_devices())
            if d["max_input_channels"] > 0
        ]
    except (OSError, ImportError):
        return []


class MicSource:
    def __init__(self, device: int | str | None = None, sample_rate: int | None = None) -> None:
        self.device = device
        self.overflows = 0
        self._stopping = False
        self._stream: Any = None
        try:
            import sounddevice as sd
        except (OSError, ImportError) as exc:  # no PortAudio library
            raise RecordingError(f"recording needs PortAudio, which is missing: {exc}") from exc
        try:
            info = sd.query_devices(device, "input")
        except (sd.PortAudioError, ValueError) as exc:  # no such device, or not an input
            if device is None and not list_devices():
                raise RecordingError(NO_MICROPHONE) from exc
            raise RecordingError(f"the input device {device} cannot be used: {exc}") from exc
        self.name = str(info["name"])
        self.sample_rate = int(sample_rate or info["default_samplerate"])

    def start(self, deliver: Deliver, fail: Fail) -> None:
        import sounddevice as sd

        def callback(indata: np.ndarray, frames: int, when: Any, status: Any) -> None:
            if status.input_overflow:
                self.overflows += 1
            deliver(indata.mean(axis=1) if indata.shape[1] > 1 else indata[:, 0].copy())

        def finished() -> None:
            if self._stream is not None and not self._stopping:
                fail(RecordingError(f"the input device {self.name} stopped (unplugged?)"))

        try:
            self._stream = sd.InputStream(
                device=self.device, channels=1, samplerate=self.sample_rate, dtype="float32",
                blocksize=round(self.sample_rate * BLOCK_SECONDS), callback=callback,
                finished_callback=finished,
            )  # fmt: skip
            self._stream.start()
        except (sd.PortAudioError, OSError, ValueError) as exc:
            self._stream = None
            raise RecordingError(f"the input device {self.name} will not open: {exc}") from exc

    def stop(self) -> None:
        stream, self._stream = self._stream, None
        self._stopping = True
        if stream is not None:
            try:
                stream.stop()
                stream.close()
            except Exception:  # a device already gone cannot be stopped twice
                pass


class FileSource:
    def __init__(self, path: Path, speed: float = 1.0, block_seconds: float = BLOCK_SECONDS) -> None:
        import soundfile as sf

        if speed <= 0:
            raise ValueError(f"speed must be positive, got {speed}")
        self.path = Path(path)
        self.name = f"file {self.path.name}"
        self.speed = speed
        self.block_seconds = block_seconds
        try:
            info = sf.info(str(self.path))
        except (OSError, sf.LibsndfileError) as exc:
            raise RecordingError(f"{self.path.name} cannot be played as a source: {exc}") from exc
        self.sample_rate = int(info.samplerate)
        self.channels = int(info.channels)
        self.finished = threading.Event()  # set when the whole file was delivered
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, deliver: Deliver, fail: Fail) -> None:
        self._thread = threading.Thread(target=self._play, args=(deliver, fail), daemon=True,
                                        name="file-source")  # fmt: skip
        self._thread.start()

    def _play(self, deliver: Deliver, fail: Fail) -> None:
        import soundfile as sf

        step = round(self.block_seconds * self.sample_rate)
        t0, done = time.monotonic(), 0
        try:
            for block in sf.blocks(str(self.path), blocksize=step, dtype="float32", always_2d=True):
                due = t0 + done / self.sample_rate / self.speed
                if self._stop.wait(max(0.0, due - time.monotonic())):
                    return
                deliver(block.mean(axis=1) if self.channels > 1 else block[:, 0].copy())
                done += len(block)
        except (OSError, RuntimeError, sf.LibsndfileError) as exc:
            fail(RecordingError(f"{self.name} stopped after {done / self.sample_rate:.1f} s: {exc}"))
            return
        self.finished.set()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
