"""The capture stream: audio from a source to a FLAC file as it arrives, and on to listeners.

Contract of `CaptureStream(source, path)`:
- `start()` opens the file (`FlacWriter`, flushed every ≤ 2 s) and the source; the source's
  callback only queues the block (an unbounded queue: a slow disk or a slow listener never drops
  audio); one writer thread writes each block, then hands it to `on_block(block, at_seconds)`
  (the live transcription path) — in order, from that one thread. A listener that raises is
  let go and reported once to `on_listener_error(exception)`: the recording goes on without it.
  A `start()` that raises (the device or the file will not open: a rate FLAC cannot hold) leaves
  no file behind.
- `pause()` / `resume()`: while paused the source's blocks are not kept, so the file and the
  elapsed time (`seconds`) hold only what was recorded.
- `level` is the peak (0..1) of the latest block, for a meter.
- A failure — the device will not open (raised by `start`), stops delivering audio for
  `stall_seconds` (unplugged), reports an error, or the disk fills — ends the recording: the file is
  closed with everything written so far, `error` holds a `RecordingError` and `on_error(error)` is
  called once (from the writer thread). After a failed write the file is made clean up to its last
  whole frame (`recovery.recover`), or, where that cannot be written either, keeps its marker so
  the next start offers recovery; the error's message says which.
- `stop()` stops the source, writes what is queued, closes the file and returns its path; it is
  idempotent and also what a failure does. `ended` is set once the stream is over for any reason
  (stop, failure, or a finite source that delivered all its audio).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from engine.errors import RecordingError
from engine.live.flac_writer import FLUSH_SECONDS, FlacWriter
from engine.live.sources import AudioSource

BlockFn = Callable[[np.ndarray, float], None]  # (block (T,) float32, seconds recorded before it)
ErrorFn = Callable[[RecordingError], None]
log = logging.getLogger(__name__)
STALL_SECONDS = 3.0
_END = None


class CaptureStream:
    def __init__(self, source: AudioSource, path: Path, on_block: BlockFn | None = None,
                 on_error: ErrorFn | None = None, flush_seconds: float = FLUSH_SECONDS,
                 stall_seconds: float = STALL_SECONDS,
                 on_listener_error: Callable[[Exception], None] | None = None) -> None:  # fmt: skip
        self.source = source
        self.path = Path(path)
        self.on_block = on_block
        self.on_error = on_error
        self.on_listener_error = on_listener_error
        self.flush_seconds = flush_seconds
        self.stall_seconds = stall_seconds
        self.error: RecordingError | None = None
        self.level = 0.0
        self.ended = threading.Event()
        self._paused = threading.Event()
        self._queue: queue.Queue[np.ndarray | None] = queue.Queue()
        self._writer: FlacWriter | None = None
        self._thread: threading.Thread | None = None
        self._last_block = time.monotonic()
        self._stopping = False
        self._salvaged = False

    @property
    def sample_rate(self) -> int:
        return self.source.sample_rate

    @property
    def seconds(self) -> float:
        """Seconds recorded so far (written to the file), pauses excluded."""
        return self._writer.seconds if self._writer is not None else 0.0

    @property
    def flushed_seconds(self) -> float:
        return self._writer.flushed_frames / self.sample_rate if self._writer is not None else 0.0

    @property
    def paused(self) -> bool:
        return self._paused.is_set()

    @property
    def backlog(self) -> int:
        """Blocks received but not yet written."""
        return self._queue.qsize()

    def start(self) -> None:
        try:
            self._writer = FlacWriter(self.path, self.sample_rate, self.flush_seconds, self.source.name)
            self.source.start(self._deliver, self._fail)
        except RecordingError as exc:  # a device that will not open, a rate FLAC cannot hold
            if self._writer is not None:
                self._writer.close()
            self.path.unlink(missing_ok=True)  # nothing was recorded: no empty file left behind
            self.error = exc
            self.ended.set()
            raise
        self._last_block = time.monotonic()
        self._thread = threading.Thread(target=self._write_loop, daemon=True, name="capture-writer")
        self._thread.start()

    def pause(self) -> None:
        self._paused.set()

    def resume(self) -> None:
        self._last_block = time.monotonic()
        self._paused.clear()

    def stop(self) -> Path:
        """End the recording; returns the file (complete up to the stop or the failure)."""
        self._stopping = True
        try:
            self.source.stop()  # a device that will not close raises: the file is finished all the same
        finally:
            self._queue.put(_END)
            if self._thread is not None and self._thread is not threading.current_thread():
                self._thread.join()
            self._close()
        return self.path

    # -- source thread ---------------------------------------------------------------------------
    def _deliver(self, block: np.ndarray) -> None:
        self._last_block = time.monotonic()
        if not self._paused.is_set():
            self._queue.put(block)

    def _fail(self, error: Exception) -> None:
        wrapped = error if isinstance(error, RecordingError) else RecordingError(str(error))
        self._queue.put(_Failure(wrapped))

    # -- writer thread ---------------------------------------------------------------------------
    def _write_loop(self) -> None:
        try:
            while True:
                try:
                    item = self._queue.get(timeout=0.25)
                except queue.Empty:
                    self._check_stall()
                    continue
                if item is _END:
                    break
                if isinstance(item, _Failure):
                    raise item.error
                self._write(item)
        except RecordingError as exc:
            self._end_with(exc)
        finally:
            self._close()

    def _write(self, block: np.ndarray) -> None:
        assert self._writer is not None
        at = self._writer.seconds
        self._writer.write(block)
        self.level = float(np.max(np.abs(block))) if len(block) else 0.0
        if self.on_block is not None:
            try:
                self.on_block(block, at)
            except Exception as exc:  # the listener's failure must not end the recording
                self._detach(exc)

    def _detach(self, exc: Exception) -> None:
        self.on_block = None
        log.exception("the listener of %s failed; the recording goes on without it", self.path.name)
        if self.on_listener_error is not None:
            self.on_listener_error(exc)

    def _check_stall(self) -> None:
        if getattr(self.source, "finished", None) is not None and self.source.finished.is_set():
            self._queue.put(_END)  # a finite source delivered everything: the recording is over
            return
        quiet = time.monotonic() - self._last_block
        if not self._stopping and not self._paused.is_set() and quiet > self.stall_seconds:
            raise RecordingError(
                f"no audio from {self.source.name} for {quiet:.0f} s (unplugged?); "
                f"the recording so far is kept in {self.path.name}"
            )

    def _end_with(self, error: RecordingError) -> None:
        self.error = error
        self._stopping = True
        self.source.stop()
        self._close()
        if self.on_error is not None:
            self.on_error(self.error)

    def _close(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()
            except RecordingError as exc:
                self.error = self.error or exc
            if self._writer.failed and not self._salvaged:
                self._salvaged = True
                self.error = self._salvage(self.error or RecordingError("writing the recording failed"))
        self.ended.set()

    def _salvage(self, error: RecordingError) -> RecordingError:
        """After a failed write (a full disk): make the file clean up to its last whole frame, or,
        when that cannot be written either, leave it marked for recovery; say which."""
        from engine.live.recovery import recover

        try:
            seconds = recover(self.path)
        except RecordingError:
            return RecordingError(
                f"{error}; the recording up to its last save ({self.flushed_seconds:.0f} s) is kept in "
                f"{self.path}; once there is space again, `murmur record --recover` or the app's next "
                f"start makes it whole"
            )
        return RecordingError(f"{error}; the {seconds:.0f} s recorded before it are kept in {self.path}")


class _Failure:
    def __init__(self, error: RecordingError) -> None:
        self.error = error
