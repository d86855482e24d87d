"""Decode an audio or video file into a mono `Recording` at a chosen sample rate.

Contract:
- `load_audio(path, sample_rate, stream=None)` returns float32 mono samples at `sample_rate`,
  `source=path`. Channels are averaged; rates are converted with `engine.audio.resample`
  (anti-aliased, no delay). NaN and infinite samples (float files can hold them) become 0 before
  resampling; how many there were is logged as a warning naming the file. One rule for samples
  beyond full scale: a file whose peak exceeds `OVER_PEAK` (a float WAV at 3.9 or at 10^6 alike)
  is scaled down to peak 1 with a warning, never clipped; below it (the overshoot resampling
  adds to a full-scale file) samples are clipped to [-1, 1].
- `channel`: "mix" or None (the mean of the channels), "left", "right" or a channel number
  (`engine.audio.channels`). When the mean cancels out (opposite-phase stereo: silence where
  each channel has speech) the loudest channel is decoded instead, with a warning.
- WAV/FLAC/AIFF and the like are decoded with soundfile (`engine.audio.sf_source`); MP3 and Ogg
  (whose length libsndfile takes from the first header, so two files joined byte-wise or a chained
  Ogg would lose all but the first) and everything else (m4a, mp4, webm, opus, mkv, video...)
  with PyAV (`engine.audio.av_source`), one audio stream: `stream` (index among the audio
  streams) or the default one, with a warning when a file has several.
- Memory stays bounded for multi-hour files: input is decoded in blocks of about a second and
  resampled as it arrives into one preallocated output array (grown geometrically only when the
  length is not known in advance). The file is never held whole at its original rate or channels.
- Every failure a user can cause (missing file, folder, empty or corrupt file, not audio, no audio
  track, nothing decodable) raises `AudioDecodeError` with a message naming the file; a file cut
  short of its header's length (a WAV, or a compressed file whose end is missing or damaged) is
  decoded as far as it goes with a warning "only X of Y". `progress(
  decoded_s, total_s)` is called after each block; `cancel` is checked between blocks and raises
  `Cancelled`.
- `probe_duration(path)` reads the duration from the file's headers without decoding the audio.
- `audio_streams(path)` lists a file's audio streams (labels as in the warning) and the index
  used when none is chosen; a file PyAV cannot open, or one read by soundfile, has one.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from pathlib import Path

import av
import numpy as np
import soundfile as sf

from engine.audio.av_source import audio_stream, av_blocks, av_duration, av_open, default_index, stream_labels
from engine.audio.blocks import Blocks, Mix, clock, damaged
from engine.audio.channels import Mixer, parse_channel
from engine.audio.resample import StreamingResampler, output_length
from engine.audio.sf_source import sf_blocks
from engine.errors import AudioDecodeError, Cancelled
from engine.types import Recording

ProgressFn = Callable[[float, float], None]
log = logging.getLogger(__name__)

SOUNDFILE_EXTENSIONS = frozenset(
    {".wav", ".wave", ".flac", ".ogg", ".oga", ".mp3", ".aif", ".aiff", ".aifc", ".au", ".caf", ".w64"}
)
FIRST_HEADER_ONLY = frozenset({".mp3", ".ogg", ".oga"})  # libsndfile stops where the first file ends
# fmt: off
SUPPORTED_EXTENSIONS = SOUNDFILE_EXTENSIONS | frozenset(
    {".m4a", ".aac", ".mp4", ".m4v", ".mov", ".webm", ".opus", ".mkv", ".mka", ".avi", ".wma", ".wmv",
     ".3gp", ".amr", ".ac3", ".flv", ".mpg", ".mpeg", ".ts"}
)
# fmt: on
OVER_PEAK = 1.01  # peaks beyond ±this are out of scale: scaled down with a warning (≤: resampling overshoot)
_MAX_PREALLOC_S = 12 * 3600.0  # never trust a header for more than this much up-front memory
_SHORTFALL_S, _SHORTFALL_FRACTION = 1.0, 0.02  # decoded this much less than an exact header: warn
_BACKEND_ERRORS = (av.FFmpegError, sf.SoundFileError)


def load_audio(
    path: str | Path,
    sample_rate: int,
    *,
    stream: int | None = None,
    channel: int | str | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> Recording:
    """Decode `path` (audio stream `stream`, or the default one; channel `channel`, or their mix)
    to mono float32 at `sample_rate` Hz."""
    if int(sample_rate) != sample_rate or sample_rate <= 0:
        raise ValueError(f"sample_rate must be a positive whole number of Hz, got {sample_rate!r}")
    if stream is not None and (int(stream) != stream or stream < 0):
        raise ValueError(f"audio stream must be a stream number from 0, got {stream!r}")
    chosen = parse_channel(channel)
    path = Path(path)
    _check_file(path)
    _check_cancel(cancel)
    mixer = Mixer(path, chosen)
    samples = _decode(path, stream, mixer, int(sample_rate), progress, cancel)
    loudest = mixer.cancelling() if chosen is None else None
    if loudest is not None:
        log.warning(
            "'%s': its channels cancel out when mixed (opposite phase: one side wired inverted?), which "
            "leaves silence; transcribing channel %d alone instead (choose with --channel left|right|N)",
            path.name, loudest,
        )  # fmt: skip
        samples = _decode(path, stream, Mixer(path, loudest), int(sample_rate), progress, cancel)
    taken = None if stream is None else int(stream)
    channel_taken = chosen if loudest is None else loudest
    return Recording(samples, int(sample_rate), source=path, stream=taken, channel=channel_taken)


def _decode(
    path: Path, stream: int | None, mix: Mix, sample_rate: int, progress: ProgressFn | None,
    cancel: threading.Event | None,
) -> np.ndarray:  # fmt: skip
    blocks = _open_blocks(path, stream, mix)
    try:
        return _resample_blocks(path, blocks, sample_rate, progress, cancel)
    finally:
        blocks.close()


def probe_duration(path: str | Path) -> float:
    """Duration in seconds from the file's headers (no decoding); 0.0 if the headers do not say."""
    path = Path(path)
    _check_file(path)
    if path.suffix.lower() in SOUNDFILE_EXTENSIONS - FIRST_HEADER_ONLY:
        try:
            info = sf.info(str(path))
            return info.frames / info.samplerate
        except (sf.SoundFileError, RuntimeError, ValueError):
            pass  # mislabelled or unusual: ask FFmpeg
    with av_open(path, SUPPORTED_EXTENSIONS) as container:
        return av_duration(container, audio_stream(container, path, default_index(container)))


def audio_streams(path: str | Path) -> tuple[tuple[str, ...], int]:
    """`(labels, default index)` of the audio streams of `path`, without decoding (see the contract)."""
    path = Path(path)
    _check_file(path)
    if path.suffix.lower() in SOUNDFILE_EXTENSIONS:
        return ("#0",), 0
    with av_open(path, SUPPORTED_EXTENSIONS) as container:
        labels = tuple(stream_labels(container))
        return labels or ("#0",), default_index(container) if labels else 0


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
        raise damaged(path, seen, exc) from exc
    if resampler is None or resampler.samples_in == 0:
        raise AudioDecodeError(f"'{path.name}' contains no audio (its length is zero)")
    short = header.total_s - seen
    if header.exact and short > max(_SHORTFALL_S, _SHORTFALL_FRACTION * header.total_s):
        log.warning(
            "'%s' ends before its header says: only %s of %s could be decoded (the rest is missing "
            "or damaged)", path.name, clock(seen), clock(header.total_s),
        )  # fmt: skip
    out.write(resampler.flush())
    if repaired:
        log.warning(
            "'%s': %d samples were not numbers (NaN or infinite) and were replaced with silence",
            path.name, repaired,
        )  # fmt: skip
    if out.peak > OVER_PEAK:
        log.warning(
            "'%s': samples reach ±%.3g, beyond the ±1 of audio (a float file out of scale?); "
            "the recording was scaled down to fit instead of being clipped",
            path.name, out.peak,
        )  # fmt: skip
    return out.finish(OVER_PEAK)


def _repair(block: np.ndarray) -> int:
    """Set NaN and ±inf samples of `block` (T,) to 0 in place; returns how many there were."""
    bad = ~np.isfinite(block)
    count = int(np.count_nonzero(bad))
    if count:
        block[bad] = 0.0
    return count


def _open_blocks(path: Path, stream: int | None, mix: Mix) -> Blocks:
    """Pick a decoder: soundfile for the formats libsndfile reads whole, FFmpeg (PyAV) for the rest,
    and for any file when an audio stream is chosen."""
    ffmpeg = functools.partial(av_blocks, supported=SUPPORTED_EXTENSIONS, mix=mix)
    if stream is None and path.suffix.lower() in SOUNDFILE_EXTENSIONS - FIRST_HEADER_ONLY:
        return sf_blocks(path, ffmpeg, mix)
    return ffmpeg(path, stream_index=stream)


class _Output:
    """A float32 array filled front to back; grows by half when a length estimate was short.
    `peak` is the largest |sample| written (before any clipping)."""

    def __init__(self) -> None:
        self._data = np.empty(0, dtype=np.float32)
        self._n = 0
        self.peak = 0.0

    def reserve(self, n: int) -> None:
        """Allocate (untouched, so not yet resident) room for `n` samples before the first write."""
        if self._n == 0 and n > len(self._data):
            self._data = np.empty(n, dtype=np.float32)

    def write(self, y: np.ndarray) -> None:
        end = self._n + len(y)
        if end > len(self._data):
            self._data.resize(max(end, len(self._data) * 3 // 2, 1 << 16), refcheck=False)
        self._data[self._n : end] = y
        if len(y):
            self.peak = max(self.peak, float(np.max(np.abs(y))))
        self._n = end

    def finish(self, loud_peak: float) -> np.ndarray:
        """The filled part, trimmed in place (no copy): clipped to [-1, 1], or scaled to peak 1
        when `peak` exceeds `loud_peak`."""
        self._data.resize(self._n, refcheck=False)
        if self.peak > loud_peak:
            self._data *= np.float32(1.0 / self.peak)
        np.clip(self._data, -1.0, 1.0, out=self._data)
        return self._data
