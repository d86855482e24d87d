"""Speech segments from per-frame speech probabilities, the way silero-vad draws them (no torch).

Contract of `speech_runs(probs, ...)`: the same [start, end) sample spans as silero-vad 6's
`get_speech_timestamps_from_probs` with no limit on a segment's length, computed without importing
the `silero_vad` package (which imports torch, seconds and hundreds of MB for a loop over floats):
- speech starts at a frame whose probability reaches `threshold` and ends at the first frame below
  `threshold - 0.15` (floor 0.01) that is followed by at least `min_silence_ms` without speech;
- segments of `min_speech_ms` or less are dropped;
- each segment is padded by `pad_ms` on both sides; neighbours closer than two pads share the
  silence between them equally; nothing goes beyond the audio.
Frames are 512 samples at 16 kHz.
"""

from __future__ import annotations

from collections.abc import Sequence

RATE = 16000
FRAME = 512


def speech_runs(
    probs: Sequence[float],
    n_samples: int,
    threshold: float = 0.5,
    min_speech_ms: int = 250,
    min_silence_ms: int = 100,
    pad_ms: int = 30,
) -> list[tuple[int, int]]:
    """Speech spans in samples (see the module contract)."""
    runs = _raw_runs(probs, n_samples, threshold, RATE * min_speech_ms / 1000, RATE * min_silence_ms / 1000)
    return _padded(runs, RATE * pad_ms / 1000, n_samples)


def _raw_runs(
    probs: Sequence[float], n_samples: int, threshold: float, min_speech: float, min_silence: float
) -> list[list[int]]:
    low = max(threshold - 0.15, 0.01)
    runs: list[list[int]] = []
    triggered, start, silent_from = False, 0, 0
    for i, p in enumerate(probs):
        here = FRAME * i
        if p >= threshold:
            silent_from = 0
            if not triggered:
                triggered, start = True, here
                continue
        if p < low and triggered:
            silent_from = silent_from or here
            if here - silent_from < min_silence:
                continue
            if silent_from - start > min_speech:
                runs.append([start, silent_from])
            triggered, silent_from = False, 0
    if triggered and n_samples - start > min_speech:
        runs.append([start, n_samples])
    return runs


def _padded(runs: list[list[int]], pad: float, n_samples: int) -> list[tuple[int, int]]:
    for i, run in enumerate(runs):
        if i == 0:
            run[0] = int(max(0, run[0] - pad))
        if i + 1 < len(runs):
            silence = runs[i + 1][0] - run[1]
            if silence < 2 * pad:
                run[1] += int(silence // 2)
                runs[i + 1][0] = int(max(0, runs[i + 1][0] - silence // 2))
            else:
                run[1] = int(min(n_samples, run[1] + pad))
                runs[i + 1][0] = int(max(0, runs[i + 1][0] - pad))
        else:
            run[1] = int(min(n_samples, run[1] + pad))
    return [(a, b) for a, b in runs]
