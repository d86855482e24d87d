"""Speaker embeddings: resemblyzer's GE2E d-vector encoder, its weights shipped in the resemblyzer wheel.

Contract:
- `SpeakerEncoder` is the 3-layer LSTM network of resemblyzer (40 mel bands in, a 256-d L2-normalised
  embedding out) with the `pretrained.pt` weights found in the installed resemblyzer package, run
  on onnxruntime: the weights are read and written as an in-memory ONNX model without torch
  (`engine.speakers.ge2e_graph`); a `.onnx` file given as `weights`, or the one
  `onnx_encoder.bundled_model()` finds (the desktop bundle), is run as it is. The
  package is located, not imported: its librosa front end costs ~20 s of numba JIT on first use, so
  the same front end is computed here in numpy (`mel_frames`, equal to resemblyzer's
  `wav_to_mel_spectrogram` to float32 precision). Missing weights raise `ModelLoadError`.
  `_build_network` is the same network on torch, kept as the reference the exports are checked against.
- Audio is 16 kHz mono float32. Each piece of audio is volume-normalised like resemblyzer's
  `normalize_volume` (RMS raised to -30 dBFS, never lowered) before its mel frames are taken.
- `embed_windows` embeds fixed 1.6 s windows (160 frames, the encoder's training length) in batches,
  so memory is bounded by the batch whatever the recording length; `embed_audio` embeds a piece of
  any length as the normalised mean of its window embeddings (resemblyzer's `embed_utterance`).
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine.errors import ModelLoadError, check_cancel

if TYPE_CHECKING:
    from engine.speakers.onnx_encoder import OnnxEncoder

SAMPLE_RATE = 16000
HOP = 160  # 10 ms
N_FFT = 400  # 25 ms
N_MELS = 40
WINDOW_FRAMES = 160  # 1.6 s: the encoder's partial-utterance length
WINDOW_SECONDS = WINDOW_FRAMES * HOP / SAMPLE_RATE
EMBEDDING_DIM = 256
TARGET_DBFS = -30.0

ProgressFn = Callable[[float, float], None]


def resemblyzer_weights() -> Path:
    """Path of `pretrained.pt` inside the installed resemblyzer package (without importing it)."""
    spec = importlib.util.find_spec("resemblyzer")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = Path(folder) / "pretrained.pt"
        if path.is_file():
            return path
    raise ModelLoadError(
        "the speaker encoder is missing: install the package 'resemblyzer' "
        "(pip install --no-deps resemblyzer==0.1.4)"
    )


def _mel_filters() -> np.ndarray:
    """Slaney-style mel filterbank (librosa's default), float32 (N_MELS, N_FFT // 2 + 1)."""
    fft_freqs = np.linspace(0, SAMPLE_RATE / 2, N_FFT // 2 + 1)
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(SAMPLE_RATE / 2), N_MELS + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fft_freqs)
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2:] - mel_f[:-2]))[:, None]
    out = weights.astype(np.float32)
    out.setflags(write=False)
    return out


def _hz_to_mel(hz: np.ndarray | float) -> np.ndarray:
    hz = np.asarray(hz, dtype=np.float64)
    linear = hz / (200.0 / 3)
    log = 15.0 + np.log(np.maximum(hz, 1e-10) / 1000.0) / (np.log(6.4) / 27.0)
    return np.where(hz >= 1000.0, log, linear)


def _mel_to_hz(mels: np.ndarray) -> np.ndarray:
    linear = mels * (200.0 / 3)
    log = 1000.0 * np.exp((np.log(6.4) / 27.0) * (mels - 15.0))
    return np.where(mels >= 15.0, log, linear)


MEL_FILTERS = _mel_filters()  # (N_MELS, N_FFT // 2 + 1), read-only


def normalize_volume(samples: np.ndarray) -> np.ndarray:
    """Raise the RMS to -30 dBFS (never lower it), as the encoder's training data was."""
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0
    if rms <= 1e-9:
        return samples
    gain = 10 ** (TARGET_DBFS / 20) / rms
    return samples * np.float32(gain) if gain > 1 else samples


def mel_frames(samples: np.ndarray) -> np.ndarray:
    """Power mel spectrogram, centred frames with zero padding: float32 (1 + len // HOP, N_MELS)."""
    x = np.pad(np.asarray(samples, dtype=np.float32), N_FFT // 2)
    n = 1 + (len(x) - N_FFT) // HOP
    if n < 1:
        return np.zeros((0, N_MELS), np.float32)
    frames = np.lib.stride_tricks.sliding_window_view(x, N_FFT)[::HOP][:n]  # (n, N_FFT)
    window = np.hanning(N_FFT + 1)[:-1].astype(np.float32)  # periodic Hann
    power = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2  # (n, N_FFT // 2 + 1)
    return (power.astype(np.float32) @ MEL_FILTERS.T).astype(np.float32)  # (n, N_MELS)


def window_starts(n_frames: int, hop_frames: int) -> list[int]:
    """Start frames of 160-frame windows covering `n_frames` (at least one, the last flush right)."""
    if n_frames <= WINDOW_FRAMES:
        return [0]
    starts = list(range(0, n_frames - WINDOW_FRAMES + 1, hop_frames))
    if starts[-1] + WINDOW_FRAMES < n_frames:
        starts.append(n_frames - WINDOW_FRAMES)
    return starts


def partial_starts(n_samples: int, hop_frames: int, min_coverage: float = 0.75) -> list[int]:
    """resemblyzer's partial windows for `n_samples`: starts every `hop_frames`, the last one kept
    only when at least `min_coverage` of it holds audio (always at least one window)."""
    n_frames = -(-(n_samples + 1) // HOP)
    starts = list(range(0, max(1, n_frames - WINDOW_FRAMES + hop_frames + 1), hop_frames))
    coverage = (n_samples - starts[-1] * HOP) / (WINDOW_FRAMES * HOP)
    if coverage < min_coverage and len(starts) > 1:
        starts.pop()
    return starts


def fixed_window(mel: np.ndarray, start: int) -> np.ndarray:
    """Frames [start, start + 160) of `mel`, zero-padded at the end when the audio is shorter."""
    piece = mel[start : start + WINDOW_FRAMES]
    if len(piece) == WINDOW_FRAMES:
        return piece
    return np.concatenate((piece, np.zeros((WINDOW_FRAMES - len(piece), N_MELS), np.float32)))


class SpeakerEncoder:
    """The GE2E encoder; loads its weights on first use and keeps them."""

    def __init__(self, weights: Path | None = None, batch_size: int = 64, threads: int = 1) -> None:
        if batch_size < 1 or threads < 1:
            raise ValueError("embedding batch size and threads must be at least 1")
        self.weights = weights
        self.batch_size = batch_size
        self.threads = threads  # onnxruntime threads; 1: the decoder alongside keeps the other cores
        self._net: OnnxEncoder | None = None

    def load(self) -> None:
        """Load the weights now (raises `ModelLoadError` when they are missing)."""
        self._load()

    def _load(self) -> OnnxEncoder:
        if self._net is None:
            from engine.speakers.onnx_encoder import OnnxEncoder, bundled_model

            path = Path(self.weights or bundled_model() or resemblyzer_weights())
            if path.suffix == ".onnx":
                self._net = OnnxEncoder(path, self.threads)
            else:  # resemblyzer's torch checkpoint, rewritten as ONNX in memory (no torch)
                from engine.speakers.ge2e_graph import encoder_model, read_weights

                self._net = OnnxEncoder(encoder_model(read_weights(path)), self.threads)
        return self._net

    def embed_mels(self, windows: np.ndarray) -> np.ndarray:
        """Embeddings of (B, 160, 40) mel windows: float32 (B, 256), each of unit length."""
        return self._load().embed(windows, self.batch_size)

    def embed_audio(self, samples: np.ndarray, hop_frames: int = 77) -> np.ndarray | None:
        """One embedding for a piece of 16 kHz audio, or None when it is empty.

        The mean of 1.6 s windows every `hop_frames`, normalised: resemblyzer's `embed_utterance`
        (its default rate 1.3 per second is a hop of 77 frames), after `normalize_volume`.
        """
        return self.embed_pieces([samples], hop_frames)[0]

    def embed_pieces(
        self,
        pieces: Iterable[np.ndarray],
        hop_frames: int = 77,
        cancel: threading.Event | None = None,
    ) -> list[np.ndarray | None]:
        """`embed_audio` of many pieces, their windows batched together (memory: one batch)."""
        sums: list[np.ndarray | None] = []
        pending: list[np.ndarray] = []
        owners: list[int] = []

        def flush() -> None:
            check_cancel(cancel)
            for owner, vec in zip(owners, self.embed_mels(np.stack(pending)), strict=True):
                sums[owner] = vec if sums[owner] is None else sums[owner] + vec
            pending.clear()
            owners.clear()

        for i, samples in enumerate(pieces):
            sums.append(None)
            for window in _partials(samples, hop_frames):
                pending.append(window)
                owners.append(i)
                if len(pending) == self.batch_size:
                    flush()
        if pending:
            flush()
        return [
            None if v is None else (v / max(float(np.linalg.norm(v)), 1e-9)).astype(np.float32) for v in sums
        ]

    def embed_windows(
        self,
        pieces: Iterable[np.ndarray],
        hop_frames: int,
        total_seconds: float,
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> tuple[list[tuple[int, int]], np.ndarray]:
        """Embed 1.6 s windows every `hop_frames` over each piece of 16 kHz audio.

        Pieces are consumed one at a time (a generator keeps memory bounded). Returns (piece index,
        start frame) per window and float32 (N, 256) embeddings; `on_progress(seconds done,
        total_seconds)` after each piece; `cancel` is checked before each batch.
        """
        keys: list[tuple[int, int]] = []
        done_batches: list[np.ndarray] = []
        pending: list[np.ndarray] = []
        done = 0.0
        for i, piece in enumerate(pieces):
            mel = mel_frames(normalize_volume(piece))
            for start in window_starts(len(mel), hop_frames):
                keys.append((i, start))
                pending.append(fixed_window(mel, start))
                if len(pending) == self.batch_size:
                    check_cancel(cancel)
                    done_batches.append(self.embed_mels(np.stack(pending)))
                    pending = []
            done += len(piece) / SAMPLE_RATE
            if on_progress is not None:
                on_progress(min(done, total_seconds), total_seconds)
        if pending:
            check_cancel(cancel)
            done_batches.append(self.embed_mels(np.stack(pending)))
        if not done_batches:
            return keys, np.zeros((0, EMBEDDING_DIM), np.float32)
        return keys, np.concatenate(done_batches)


def _partials(samples: np.ndarray, hop_frames: int) -> list[np.ndarray]:
    """resemblyzer's partial-utterance mel windows of a piece (none when it is too short)."""
    if len(samples) < HOP:
        return []
    starts = partial_starts(len(samples), hop_frames)
    needed = (starts[-1] + WINDOW_FRAMES) * HOP
    samples = normalize_volume(samples)
    if needed >= len(samples):
        samples = np.pad(samples, (0, needed - len(samples)))
    mel = mel_frames(samples)
    return [mel[s : s + WINDOW_FRAMES] for s in starts]


def _build_network(path: Path) -> object:
    import torch
    from torch import nn

    class _DVector(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.LSTM(N_MELS, 256, 3, batch_first=True)
            self.linear = nn.Linear(256, EMBEDDING_DIM)

        def forward(self, mels: torch.Tensor) -> torch.Tensor:  # (B, F, 40) → (B, 256)
            _, (hidden, _) = self.lstm(mels)
            raw = torch.relu(self.linear(hidden[-1]))
            return raw / torch.norm(raw, dim=1, keepdim=True).clamp_min(1e-9)

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)["model_state"]
        net = _DVector()
        net.load_state_dict({k: v for k, v in state.items() if not k.startswith("similarity_")})
    except (OSError, KeyError, RuntimeError) as exc:
        raise ModelLoadError(f"could not load the speaker encoder from {path}: {exc}") from exc
    return net.eval()
