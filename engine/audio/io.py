"""Decode an audio or video file into a mono `Recording` at a chosen sample rate.

Contract:
- `load_audio(path, sample_rate)` returns float32 mono samples at `sample_rate`, `source=path`.
  Channels are averaged; rates are converted with `engine.audio.resample` (anti-aliased, no delay);
  samples are clipped to [-1, 1]. NaN and infinite samples (float files can hold them) become 0
  before resampling; how many there were is logged as a warning naming the file.
  WAV/FLAC/OGG/MP3 (whatever libsndfile reads) are decoded with soundfile; everything else (m4a,
  mp4, webm, opus, mkv, video files...) with PyAV, audio track only.
- Memory stays bounded for multi-hour files: input is decoded in blocks of about a second and
  resampled as it arrives into one preallocated output array (grown geometrically only when the
  length is not known in advance). The file is never held whole at its original rate or channels.
- Every failure a user can cause (missing file, folder, empty or corrupt file, not audio, no audio
  track, no samples) raises `AudioDecodeError` with a message naming the file. `progress(decoded_s,
  total_s)` is called after each block; `cancel` is checked between blocks and raises `Cancelled`.
- `probe_duration(path)` reads the duration from the file's headers without decoding the audio.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import av
import numpy as np
import soundfile as sf

from engine.audio.resample import StreamingResampler, output_length
from engine.errors import AudioDecodeError, Cancelled
from engine.types import Recording

ProgressFn = Callable[[float, float], None]
log = logging.getLogger(__name__)

SOUNDFILE_EXTENSIONS = frozenset(
    {".wav", ".wave", ".flac", ".ogg", ".oga", ".mp3", ".aif", ".aiff", ".aifc", ".au", ".caf", ".w64"}
)
SUPPORTED_EXTENSIONS = SOUNDFILE_EXTENSIONS | frozenset(
    {".m4a", ".aac", ".mp4", ".m4v", ".mov", ".webm", ".opus", ".mkv", ".mka", ".avi", ".wma", ".wmv",
     ".3gp", ".amr", ".ac3", ".flv", ".mpg", ".mpeg", ".ts"}
)
BLOCK_FRAMES = 1 << 16  # source frames decoded per soundfile read
_MAX_PREALLOC_S = 12 * 3600.0  # never trust a header for more than this much up-front memory
_MAX_BAD_PACKETS = 100  # damaged packets skipped in a compressed stream before giving up
_SHORTFALL_S, _SHORTFALL_FRACTION = 1.0, 0.02  # decoded this much less than an exact header: damaged
_EXACT_LENGTH_CONTAINERS = ("mov", "matroska", "ogg", "wav", "flac")  # FFmpeg names; header length exact
_BACKEND_ERRORS = (av.FFmpegError, sf.SoundFileError)


def load_audio(
    path: str | Path,
    sample_rate: int,
    *,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> Recording:
    """Decode `path` to mono float32 at `sample_rate` Hz."""
    if int(sample_rate) != sample_rate or sample_rate <= 0:
        raise ValueError(f"sample_rate must be a positive whole number of Hz, got {sample_rate!r}")
    path = Path(path)
    _check_file(path)
    _check_cancel(cancel)
    blocks = _open_blocks(path)
    try:
        samples = _resample_blocks(path, blocks, int(sample_rate), progress, cancel)
    finally:
        blocks.close()
    return Recording(samples, int(sample_rate), source=path)


def probe_duration(path: str | Path) -> float:
    """Duration in seconds from the file's headers (no decoding); 0.0 if the headers do not say."""
    path = Path(path)
    _check_file(path)
    if path.suffix.lower() in SOUNDFILE_EXTENSIONS:
        try:
            info = sf.info(str(path))
            return info.frames / info.samplerate
        except (sf.SoundFileError, RuntimeError, ValueError):
            pass  # mislabelled or unusual: ask FFmpeg
    with _av_open(path) as container:
        return _av_duration(container, _audio_stream(container, path))


def _check_file(path: Path) -> None:
    """Fail early, with a plain message, on paths that cannot be an audio file."""
    name = path.name or str(path)
    if not path.exists():
        raise AudioDecodeError(f"'{name}' was not found (looked for {path})")
    if path.is_dir():
        raise AudioDecodeError(f"'{name}' is a folder, not an audio file")
    try:
        size = path.stat().st_size
        with path.open("rb"):
            pass
    except PermissionError as exc:
        raise AudioDecodeError(f"'{name}' cannot be opened: permission denied") from exc
    except OSError as exc:
        raise AudioDecodeError(f"'{name}' cannot be opened ({exc.strerror or exc})") from exc
    if size == 0:
        raise AudioDecodeError(f"'{name}' is empty (0 bytes)")


def _check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled()


def _resampler(path: Path, rate: int, sample_rate: int) -> StreamingResampler:
    try:
        return StreamingResampler(rate, sample_rate)
    except ValueError as exc:
        raise AudioDecodeError(f"'{path.name}' has an unsupported sample rate ({rate} Hz)") from exc


def _expected_length(total_s: float, rate: int, sample_rate: int) -> int:
    """Output samples to reserve: the header's duration, a little margin, capped against bad headers."""
    seconds = min(max(total_s, 0.0), _MAX_PREALLOC_S)
    n = output_length(round(seconds * rate), rate, sample_rate)
    return n + n // 200 + sample_rate


class _Header(NamedTuple):
    """What the file says about itself before decoding."""

    rate: int  # source sample rate, Hz
    total_s: float  # duration from the headers (0.0 when unknown)
    exact: bool  # the container states its length exactly, so a shorter decode means damage


Blocks = Iterator[tuple[_Header, np.ndarray]]  # mono float32 blocks at the source rate


def _resample_blocks(
    path: Path, blocks: Blocks, sample_rate: int, progress: ProgressFn | None, cancel: threading.Event | None
) -> np.ndarray:
    """Resample decoded blocks into one output array, reporting progress and checking for cancel."""
    out = _Output()
    resampler: StreamingResampler | None = None
    seen, repaired = 0.0, 0
    try:
        for header, block in blocks:
            if resampler is None:
                resampler = _resampler(path, header.rate, sample_rate)
                out.reserve(_expected_length(header.total_s, header.rate, sample_rate))
            repaired += _repair(block)
            out.write(resampler.push(block))
            seen = resampler.samples_in / header.rate
            if progress is not None:
                progress(seen, max(header.total_s, seen))
            _check_cancel(cancel)
    except _BACKEND_ERRORS as exc:  # anything the decoders raise that the blocks did not explain
        raise _damaged(path, seen, exc) from exc
    if resampler is None or resampler.samples_in == 0:
        raise AudioDecodeError(f"'{path.name}' contains no audio (its length is zero)")
    short = header.total_s - seen
    if header.exact and short > max(_SHORTFALL_S, _SHORTFALL_FRACTION * header.total_s):
        raise AudioDecodeError(
            f"'{path.name}' is damaged: only {_clock(seen)} of its {_clock(header.total_s)} could be decoded"
        )
    out.write(resampler.flush())
    if repaired:
        log.warning(
            "'%s': %d samples were not numbers (NaN or infinite) and were replaced with silence",
            path.name, repaired,
        )  # fmt: skip
    return out.finish()


def _repair(block: np.ndarray) -> int:
    """Set NaN and ±inf samples of `block` (T,) to 0 in place; returns how many there were."""
    bad = ~np.isfinite(block)
    count = int(np.count_nonzero(bad))
    if count:
        block[bad] = 0.0
    return count


def _open_blocks(path: Path) -> Blocks:
    """Pick a decoder: soundfile for the formats libsndfile reads, FFmpeg (PyAV) for the rest."""
    if path.suffix.lower() in SOUNDFILE_EXTENSIONS:
        return _soundfile_blocks(path)
    return _av_blocks(path)


def _soundfile_blocks(path: Path) -> Blocks:
    try:
        handle = sf.SoundFile(str(path))
    except (sf.SoundFileError, RuntimeError, ValueError):
        # mislabelled (e.g. an m4a named .wav) or a codec libsndfile lacks: let FFmpeg try
        yield from _av_blocks(path)
        return
    with handle:
        rate = handle.samplerate
        header = _Header(rate, handle.frames / rate, exact=handle.format != "MPEG")  # MP3: estimates
        buf = np.empty((BLOCK_FRAMES, handle.channels), dtype=np.float32)  # (frames, channels)
        done = 0
        while True:
            try:
                block = handle.read(BLOCK_FRAMES, dtype="float32", always_2d=True, out=buf)
            except (sf.SoundFileError, RuntimeError, ValueError) as exc:
                raise _damaged(path, done / rate, exc) from exc
            if len(block) == 0:
                return
            done += len(block)
            yield header, _downmix(block.T)
            if len(block) < BLOCK_FRAMES:
                return


def _av_open(path: Path) -> av.container.InputContainer:
    try:
        return av.open(str(path), metadata_errors="ignore")  # broken tags must not stop decoding
    except av.FFmpegError as exc:
        raise _unreadable(path, exc) from exc


def _av_blocks(path: Path) -> Blocks:
    """The audio track, downmixed, in blocks of about `BLOCK_FRAMES` samples."""
    with _av_open(path) as container:
        stream = _audio_stream(container, path)
        exact = container.format.name.split(",")[0] in _EXACT_LENGTH_CONTAINERS
        header: _Header | None = None
        pending: list[np.ndarray] = []
        count = 0
        for frame in _av_frames(container, stream, path):
            header = header or _Header(frame.sample_rate, _av_duration(container, stream), exact)
            pending.append(_downmix(frame.to_ndarray()))
            count += frame.samples
            if count >= BLOCK_FRAMES:
                yield header, np.concatenate(pending)
                pending, count = [], 0
        if header is None:
            raise AudioDecodeError(
                f"'{path.name}' is not an audio file this app can read (no audio could be decoded "
                "from it; it may be damaged)"
            )
        if pending:
            yield header, np.concatenate(pending)


def _av_frames(
    container: av.container.InputContainer, stream: av.AudioStream, path: Path
) -> Iterator[av.AudioFrame]:
    """Decoded frames as float planar, at the first frame's rate and layout; damaged packets skipped."""
    to_float = av.AudioResampler(format="fltp")  # only the sample format changes, unless the stream does
    bad = 0
    for packet in _packets(container, stream, path):
        try:
            frames = packet.decode()
        except av.FFmpegError as exc:
            bad += 1
            if bad > _MAX_BAD_PACKETS:
                raise _damaged(path, _packet_time(packet), exc) from exc
            continue  # one damaged packet: skip it, as players do
        for frame in [*frames, None] if packet.size == 0 else frames:  # None flushes `to_float`
            yield from to_float.resample(frame)


def _packets(
    container: av.container.InputContainer, stream: av.AudioStream, path: Path
) -> Iterator[av.Packet]:
    """The audio stream's packets; a demuxing failure (e.g. a cut-off file) is a damaged file."""
    packets = container.demux(stream)
    at = 0.0
    while True:
        try:
            packet = next(packets)
        except StopIteration:
            return
        except av.FFmpegError as exc:
            raise _damaged(path, at, exc) from exc
        at = _packet_time(packet) or at
        yield packet


def _packet_time(packet: av.Packet) -> float:
    if packet.pts is None or packet.time_base is None:
        return 0.0
    return float(packet.pts * packet.time_base)


def _audio_stream(container: av.container.InputContainer, path: Path) -> av.AudioStream:
    if not container.streams.audio:
        raise AudioDecodeError(f"'{path.name}' has no audio track")
    return container.streams.audio[0]


def _av_duration(container: av.container.InputContainer, stream: av.AudioStream) -> float:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / av.time_base
    return 0.0


def _downmix(channels: np.ndarray) -> np.ndarray:
    """(channels, frames) float32 → (frames,) float32, the mean of the channels."""
    if channels.shape[0] == 1:
        return channels[0]
    return channels.mean(axis=0, dtype=np.float32)


def _unreadable(path: Path, exc: Exception) -> AudioDecodeError:
    ext = path.suffix.lower()
    invalid = isinstance(exc, av.error.InvalidDataError)
    reason = "unrecognised or damaged data" if invalid else _reason(exc)
    if ext not in SUPPORTED_EXTENSIONS:
        reason = f"'{ext or 'no extension'}' is not a supported format; {reason}"
    return AudioDecodeError(f"'{path.name}' is not an audio file this app can read ({reason})")


def _damaged(path: Path, at_s: float, exc: Exception) -> AudioDecodeError:
    return AudioDecodeError(f"'{path.name}' is damaged: decoding failed at {_clock(at_s)} ({_reason(exc)})")


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


def _reason(exc: Exception) -> str:
    text = str(getattr(exc, "strerror", None) or exc or type(exc).__name__).strip().rstrip(".")
    return text.removeprefix("Error").lstrip(" :") or type(exc).__name__


class _Output:
    """A float32 array filled front to back; grows by half when a length estimate was short."""

    def __init__(self) -> None:
        self._data = np.empty(0, dtype=np.float32)
        self._n = 0

    def reserve(self, n: int) -> None:
        """Allocate (untouched, so not yet resident) room for `n` samples before the first write."""
        if self._n == 0 and n > len(self._data):
            self._data = np.empty(n, dtype=np.float32)

    def write(self, y: np.ndarray) -> None:
        end = self._n + len(y)
        if end > len(self._data):
            self._data.resize(max(end, len(self._data) * 3 // 2, 1 << 16), refcheck=False)
        np.clip(y, -1.0, 1.0, out=self._data[self._n : end])
        self._n = end

    def finish(self) -> np.ndarray:
        """The filled part, trimmed in place (no copy)."""
        self._data.resize(self._n, refcheck=False)
        return self._data
