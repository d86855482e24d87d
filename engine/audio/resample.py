"""Anti-aliased sample-rate conversion: a polyphase FIR resampler, one-shot and streaming.

Contract:
- `resample(x, from_rate, to_rate)` returns float32 of length ceil(len(x) * to_rate / from_rate), the
  input filtered by a zero-phase, linear-phase Kaiser-windowed sinc (no delay, no time shift).
- The filter passes everything below 0.85 × the lower Nyquist frequency (ripple < 0.001 dB) and
  attenuates everything above the lower Nyquist frequency by at least 80 dB (no audible aliasing or
  imaging). Equal rates return a float32 copy of the input.
- `StreamingResampler` takes the same signal block by block (`push`, then `flush` once) and returns
  exactly the same samples as `resample` of the whole signal, bit for bit, whatever the block sizes:
  both run the filter over the same fixed windows of the input. It holds only about one window
  (≈ `group_output` samples, default 2^15, plus the filter's context) of input at a time, and
  releases output a window at a time: live capture asks for small windows (`group_output` of
  100 ms), so what it resamples reaches the VAD within 100 ms instead of 2 s; the samples are the
  same.
- Everything is computed in float64 and returned as float32. Inputs must be 1-D (mono).
- The filter is designed and run with numpy alone (Kaiser's formulas, as `scipy.signal.kaiserord` and
  `firwin` give them; a polyphase product for what `scipy.signal.upfirdn` computes, to within
  rounding): importing scipy.signal holds the interpreter for 75–90 ms, which the first block of a
  recording would take from the window's thread.
"""

from __future__ import annotations

from math import ceil, gcd

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

STOPBAND_DB = 80.0  # attenuation above the lower Nyquist frequency
TRANSITION = 0.15  # transition band width, as a fraction of the lower Nyquist frequency
GROUP_OUTPUT = 1 << 15  # outputs computed per filter run (rounded up to a multiple of `up`)
MAX_TAPS = 1 << 24  # refuse rate pairs whose filter would be absurdly long


def rate_ratio(from_rate: int, to_rate: int) -> tuple[int, int]:
    """(up, down) in lowest terms, so that to_rate / from_rate == up / down."""
    for name, rate in (("from_rate", from_rate), ("to_rate", to_rate)):
        if int(rate) != rate or rate <= 0:
            raise ValueError(f"{name} must be a positive whole number of Hz, got {rate!r}")
    g = gcd(int(from_rate), int(to_rate))
    return int(to_rate) // g, int(from_rate) // g


def output_length(n_in: int, from_rate: int, to_rate: int) -> int:
    """Number of samples `resample` returns for `n_in` input samples."""
    up, down = rate_ratio(from_rate, to_rate)
    return -(-n_in * up // down)


def kaiser_beta(attenuation_db: float) -> float:
    """Kaiser's window parameter for a stopband attenuation in dB (his empirical formula)."""
    a = attenuation_db
    if a > 50:
        return 0.1102 * (a - 8.7)
    if a > 21:
        return 0.5842 * (a - 21) ** 0.4 + 0.07886 * (a - 21)
    return 0.0


def design_filter(up: int, down: int) -> np.ndarray:
    """Odd-length, symmetric low-pass FIR at `up` × the input rate, with gain `up`: a Kaiser-windowed
    sinc whose length follows Kaiser's estimate for `STOPBAND_DB` over the transition band."""
    widest = max(up, down)
    width = TRANSITION / widest  # as a fraction of the Nyquist frequency at `up` × the input rate
    numtaps = ceil((STOPBAND_DB - 7.95) / 2.285 / (np.pi * width) + 1) | 1  # odd: no half-sample shift
    if numtaps > MAX_TAPS:
        raise ValueError(f"rate ratio {up}/{down} is too unusual to resample")
    cutoff = (1.0 - TRANSITION / 2) / widest
    m = np.arange(numtaps) - (numtaps - 1) / 2
    h = cutoff * np.sinc(cutoff * m) * np.kaiser(numtaps, kaiser_beta(STOPBAND_DB))
    return h / h.sum() * up  # unit gain at 0 Hz, then `up` for the zeros between input samples


def phase_taps(h: np.ndarray, up: int) -> np.ndarray:
    """(up, K) taps of each output phase, reversed: row r holds h[r], h[r + up], … from last to first
    (zeros past the end of `h`), so that a window of K consecutive inputs times row r is one output."""
    k = -(-len(h) // up)
    padded = np.zeros(k * up)
    padded[: len(h)] = h
    return padded.reshape(k, up).T[:, ::-1].copy()


def polyphase(taps: np.ndarray, x: np.ndarray, up: int, down: int, first: int, count: int) -> np.ndarray:
    """Outputs `first` … `first + count - 1` of `x` upsampled by `up` (zeros between samples),
    filtered by the filter `taps` came from (`phase_taps`), and kept every `down`-th: what
    `scipy.signal.upfirdn(h, x, up, down)[first : first + count]` gives, zeros past the input's end.
    Outputs m, m + up, m + 2·up … share a phase and read windows `down` inputs apart: one matrix-vector
    product each, on a strided view of the input (no copy of the windows)."""
    k = taps.shape[1]
    last = (first + count - 1) * down // up  # the last input an output ends on
    xp = np.zeros(k - 1 + max(last + 1, len(x)))  # (k - 1 zeros, x, zeros)
    xp[k - 1 : k - 1 + len(x)] = x
    windows = sliding_window_view(xp, k)  # windows[q] = x[q - k + 1 : q + 1]
    out = np.empty(count)
    for i in range(min(up, count)):
        q, phase = divmod((first + i) * down, up)
        n = len(range(i, count, up))
        out[i::up] = windows[q : q + (n - 1) * down + 1 : down] @ taps[phase]
    return out


def resample(x: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    """Resample a mono signal from `from_rate` to `to_rate` Hz; float32 out."""
    x = _as_mono(x)
    stream = StreamingResampler(from_rate, to_rate)
    out = np.empty(output_length(len(x), from_rate, to_rate), dtype=np.float32)
    pos = 0
    step = 1 << 20
    for start in range(0, len(x), step):
        y = stream.push(x[start : start + step])
        out[pos : pos + len(y)] = y
        pos += len(y)
    y = stream.flush()
    out[pos : pos + len(y)] = y
    return out


class StreamingResampler:
    """Resample a long signal block by block, identically to `resample` on the whole signal.

    Call `push(block)` for each block in order (each returns the output samples that became final),
    then `flush()` once for the rest. Memory is bounded by one filter window, not the signal.
    """

    def __init__(self, from_rate: int, to_rate: int, group_output: int = GROUP_OUTPUT) -> None:
        if group_output < 1:
            raise ValueError(f"outputs per filter run must be at least 1, got {group_output}")
        self.up, self.down = rate_ratio(from_rate, to_rate)
        self.samples_in = 0
        self.samples_out = 0
        self._flushed = False
        if self.up == self.down:
            return
        h = design_filter(self.up, self.down)
        delay = (len(h) - 1) // 2
        self._group_in = ceil(group_output / self.up) * self.down  # new input samples per group
        self._group_out = self._group_in // self.down * self.up  # outputs per group
        left = delay // self.up  # input context before a group
        right = max((delay - self.down) // self.up + 1, 0)  # input context after a group
        self._offset = -(-(delay + left * self.up) // self.down)  # first kept output of a run
        lead = self._offset * self.down - delay - left * self.up  # aligns the output grid
        self._taps = phase_taps(np.concatenate((np.zeros(lead), h)), self.up)
        self._keep = left + right  # samples carried from one window to the next
        self._window = np.zeros(self._group_in + self._keep)  # (W,) float64; starts with `left` zeros
        self._fill = left

    def push(self, block: np.ndarray) -> np.ndarray:
        """Feed the next input samples; returns the output samples now complete (float32)."""
        if self._flushed:
            raise RuntimeError("push() after flush(): make a new StreamingResampler")
        block = _as_mono(block)
        self.samples_in += len(block)
        if self.up == self.down:
            out = block.astype(np.float32, copy=True)
            self.samples_out += len(out)
            return out
        outs: list[np.ndarray] = []
        pos = 0
        while pos < len(block):
            take = min(len(self._window) - self._fill, len(block) - pos)
            self._window[self._fill : self._fill + take] = block[pos : pos + take]
            self._fill += take
            pos += take
            if self._fill == len(self._window):
                outs.append(self._run_group())
        return self._collect(outs)

    def flush(self) -> np.ndarray:
        """Finish the signal (zeros after its end); returns the remaining output samples."""
        if self._flushed:
            raise RuntimeError("flush() called twice")
        self._flushed = True
        if self.up == self.down:
            return np.empty(0, dtype=np.float32)
        total = -(-self.samples_in * self.up // self.down)
        outs: list[np.ndarray] = []
        produced = self.samples_out
        while produced < total:
            self._window[self._fill :] = 0.0
            self._fill = len(self._window)
            y = self._run_group()[: total - produced]
            produced += len(y)
            outs.append(y)
        return self._collect(outs)

    def _run_group(self) -> np.ndarray:
        """Filter the full window into one group of outputs and slide the window on."""
        y = polyphase(self._taps, self._window, self.up, self.down, self._offset, self._group_out)
        out = y.astype(np.float32)
        self._window[: self._keep] = self._window[self._group_in :]
        self._fill = self._keep
        return out

    def _collect(self, outs: list[np.ndarray]) -> np.ndarray:
        out = np.concatenate(outs) if outs else np.empty(0, dtype=np.float32)
        self.samples_out += len(out)
        return out


def _as_mono(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"expected a 1-D (mono) signal, got shape {x.shape}")
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError(f"expected floating-point samples, got {x.dtype}")
    return x
