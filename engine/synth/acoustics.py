"""Room and channel effects for synthetic meetings: reverberation, background noise, peak limiting.

All functions are pure: randomness comes from the `numpy.random.Generator` passed in, so a seed
gives the same audio. Reverberation convolves with a synthetic impulse response (a direct path
plus exponentially decaying Gaussian noise that falls by 60 dB after `rt60` seconds) and keeps the
signal's RMS. Noise is white Gaussian at a signal-to-noise ratio measured over the speech samples.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import oaconvolve

PEAK_LIMIT = 0.98
_PRE_DELAY_S = 0.004


def impulse_response(rt60: float, sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    """A synthetic room impulse response of length `rt60` seconds, unit direct path."""  # (L,)
    if rt60 <= 0:
        raise ValueError(f"RT60 must be positive, got {rt60}")
    length = max(int(rt60 * sample_rate), 2)
    t = np.arange(length) / sample_rate
    decay = np.exp(-3.0 * np.log(10.0) * t / rt60)  # amplitude: -60 dB at t = rt60
    tail = rng.standard_normal(length) * decay
    tail[: int(_PRE_DELAY_S * sample_rate) + 1] = 0.0
    tail *= 0.5 / max(np.sqrt(np.sum(tail**2)), 1e-9)  # late energy a quarter of the direct path's
    tail[0] = 1.0
    return tail.astype(np.float32)


def reverberate(samples: np.ndarray, rt60: float, sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    """Convolve with `impulse_response`; output has the input's length and RMS."""
    wet = oaconvolve(samples, impulse_response(rt60, sample_rate, rng))[: len(samples)]
    scale = _rms(samples) / max(_rms(wet), 1e-12)
    return (wet * scale).astype(np.float32)


def add_noise(samples: np.ndarray, snr_db: float, speech: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Add white Gaussian noise `snr_db` below the mean power of the samples where `speech` is True."""
    active = samples[speech] if speech.any() else samples
    power = float(np.mean(np.square(active, dtype=np.float64))) if len(active) else 0.0
    sigma = np.sqrt(power / 10.0 ** (snr_db / 10.0))
    noise = rng.standard_normal(len(samples), dtype=np.float32) * np.float32(sigma)
    return samples + noise


def limit_peak(samples: np.ndarray) -> np.ndarray:
    """Scale down (never up) so that no sample exceeds `PEAK_LIMIT` in magnitude."""
    peak = float(np.max(np.abs(samples))) if len(samples) else 0.0
    if peak <= PEAK_LIMIT:
        return samples.astype(np.float32, copy=False)
    return (samples * np.float32(PEAK_LIMIT / peak)).astype(np.float32)


def _rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0
