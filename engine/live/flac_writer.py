"""A FLAC file written as the audio arrives, so a crash keeps all but the last seconds.

Contract of `FlacWriter(path, sample_rate)`:
- mono 16-bit FLAC; `write(block)` appends float32 samples (clipped to [-1, 1]);
- the file is flushed to the operating system and synced to the disk at least every
  `flush_seconds` (default 2) of audio, so after a kill or a power cut the file decodes up to the
  last flush (`engine.live.recovery.recover` makes it a clean file again);
- while the file is open a marker `<name>.recording.json` lies beside it (the sample rate, when it
  started); `close()` finalises the FLAC header and removes the marker, so a marker found later means
  "this recording was cut short";
- failures (full disk, folder removed) raise `RecordingError` with the reason ("the disk is full");
  what was flushed stays on disk. A file that cannot be opened leaves no marker. After a failed
  write or flush `failed` is set and `close()` keeps the marker: the file ends somewhere after its
  last flush and needs `recover`. `close()` reads the finished header back, since libsndfile says
  nothing when the last frame or the header cannot be written: a header that does not count every
  sample written is a failure too (`failed` set, the marker kept).

`new_recording_path(folder)` names a new recording `recording-<date>-<time>.flac`, or `…-2.flac`,
`…-3.flac` when that name is taken: the name is claimed by creating the file exclusively, so two
recordings started in the same second (two processes, or one stopped and the next started at once)
never share a file. The empty file is what `FlacWriter` then writes into.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import os
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.errors import RecordingError

MARKER_SUFFIX = ".recording.json"
FLUSH_SECONDS = 2.0


def new_recording_path(folder: Path, now: float | None = None) -> Path:
    """A new, unused recording file in `folder` (created empty, exclusively); see the contract."""
    stem = time.strftime("recording-%Y%m%d-%H%M%S", time.localtime(now))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for n in itertools.count(1):
            path = folder / (f"{stem}.flac" if n == 1 else f"{stem}-{n}.flac")
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            except FileExistsError:
                continue
            return path
    except OSError as exc:
        raise RecordingError(f"cannot write a recording into {folder}: {_reason(exc)}") from exc
    raise AssertionError("unreachable")


def marker_path(audio: Path) -> Path:
    """The marker that says `audio` is being recorded (or was cut short)."""
    return audio.with_name(audio.name + MARKER_SUFFIX)


class FlacWriter:
    def __init__(self, path: Path, sample_rate: int, flush_seconds: float = FLUSH_SECONDS,
                 device: str = "") -> None:  # fmt: skip
        if not 0 < flush_seconds <= FLUSH_SECONDS:
            raise ValueError(f"flush interval must be in (0, {FLUSH_SECONDS:g}] s, got {flush_seconds}")
        self.path = Path(path)
        self.sample_rate = sample_rate
        self.flush_samples = max(1, round(flush_seconds * sample_rate))
        self.frames = 0  # samples written
        self.flushed_frames = 0  # samples known to be on disk
        self._since_flush = 0
        self.failed = False  # a write or flush failed: the file needs `recover`
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            marker_path(self.path).write_text(json.dumps({
                "audio": self.path.name, "sample_rate": sample_rate, "device": device,
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }))  # fmt: skip
            self._file: sf.SoundFile | None = sf.SoundFile(
                self.path, "w", samplerate=sample_rate, channels=1, format="FLAC", subtype="PCM_16"
            )
            self._fd = os.open(self.path, os.O_RDONLY)  # for fsync: libsndfile keeps its own
        except (OSError, sf.LibsndfileError) as exc:
            with contextlib.suppress(OSError):  # nothing was recorded: not "cut short"
                marker_path(self.path).unlink()
            raise RecordingError(f"cannot write the recording {self.path}: {_reason(exc)}") from exc

    @property
    def seconds(self) -> float:
        return self.frames / self.sample_rate

    def write(self, block: np.ndarray) -> None:
        """Append mono float32 samples (T,); flushes when `flush_seconds` of audio are pending."""
        if self._file is None:
            raise RecordingError(f"the recording {self.path.name} is already closed")
        try:
            self._file.write(np.clip(block, -1.0, 1.0).astype(np.float32))
        except (OSError, sf.LibsndfileError) as exc:
            self.failed = True
            raise RecordingError(f"writing {self.path.name} failed: {_reason(exc)}") from exc
        self.frames += len(block)
        self._since_flush += len(block)
        if self._since_flush >= self.flush_samples:
            self.flush()

    def flush(self) -> None:
        """Hand everything written so far to the disk (libsndfile flush + fsync)."""
        if self._file is None:
            return
        try:
            self._file.flush()
            os.fsync(self._fd)
        except (OSError, sf.LibsndfileError) as exc:
            self.failed = True
            raise RecordingError(f"saving {self.path.name} to disk failed: {_reason(exc)}") from exc
        self.flushed_frames = self.frames
        self._since_flush = 0

    def close(self) -> None:
        """Finish the file (header with the length) and remove the marker. Idempotent. After a
        failure the file is only released: it keeps its marker, for `recover`."""
        if self._file is None:
            return
        file, self._file = self._file, None
        if self.failed:
            _release(file, self._fd)
            return
        try:
            file.close()
            os.fsync(self._fd)
            os.close(self._fd)
        except (OSError, sf.LibsndfileError) as exc:
            raise RecordingError(f"finishing {self.path.name} failed: {_reason(exc)}") from exc
        if self.frames and not self._complete():
            self.failed = True  # libsndfile does not report a last frame it could not write
            raise RecordingError(f"finishing {self.path.name} failed: its end could not be written "
                                 "(is the disk full?)")  # fmt: skip
        self.flushed_frames = self.frames
        marker_path(self.path).unlink(missing_ok=True)

    def _complete(self) -> bool:
        """Whether the closed file's header holds every sample written (an empty file has none)."""
        try:
            return sf.info(str(self.path)).frames == self.frames
        except (OSError, sf.LibsndfileError):
            return False


def _release(file: sf.SoundFile, fd: int) -> None:
    """Let go of a file whose writes failed; its own errors (the same full disk) change nothing."""
    for close in (file.close, lambda: os.close(fd)):
        with contextlib.suppress(OSError, sf.LibsndfileError):
            close()


def _reason(exc: Exception) -> str:
    code = exc.errno if isinstance(exc, OSError) else _system_errno(exc)
    if code in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full"
    if code == errno.EFBIG:
        return "the file has reached the largest size allowed here"
    if code:
        return os.strerror(code)
    return str(exc) or type(exc).__name__


def _system_errno(exc: Exception) -> int:
    """The C `errno` behind libsndfile's bare "System error." (0 when there is none)."""
    if not isinstance(exc, sf.LibsndfileError) or "System error" not in str(exc):
        return 0
    ffi = getattr(sf, "_ffi", None)  # soundfile's cffi handle keeps the errno of its last call
    return int(getattr(ffi, "errno", 0) or 0)
