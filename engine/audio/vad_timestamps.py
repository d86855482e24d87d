"""Speech segments from silero's per-frame speech probabilities, without torch.

Contract: `speech_stamps(probs, ...)` returns the same list of `{"start", "end"}` sample offsets
(16 kHz, 512-sample frames) as silero-vad's `get_speech_timestamps_from_probs` with
`max_speech_duration_s` infinite and `return_seconds=False`: a hysteresis state machine (enter at
`threshold`, leave below `threshold - 0.15` after `min_silence_ms`), segments shorter than
`min_speech_ms` dropped, each padded by `speech_pad_ms` (half the gap when neighbours are closer).
silero-vad's own function lives in a module that imports torch at import time, so the default
path (and the torch-free desktop bundle) uses this port of it (silero-vad is MIT-licensed);
tests/engine/test_vad.py checks that both agree.
"""

from __future__ import annotations

from collections.abc import Sequence

RATE = 16000
FRAME = 512


def speech_stamps(
    probs: Sequence[float],
    threshold: float,
    min_speech_ms: int,
    min_silence_ms: int,
    speech_pad_ms: int,
    length_samples: int,
) -> list[dict[str, int]]:
    """Speech segments as sample offsets at 16 kHz (see the module contract)."""
    min_speech = RATE * min_speech_ms / 1000
    min_silence = RATE * min_silence_ms / 1000
    negative = max(threshold - 0.15, 0.01)
    speeches: list[dict[str, int]] = []
    start: int | None = None
    temp_end = 0
    for i, p in enumerate(probs):
        sample = FRAME * i
        if p >= threshold and temp_end:
            temp_end = 0
        if p >= threshold and start is None:
            start = sample
            continue
        if start is not None and p < negative:
            if not temp_end:
                temp_end = sample
            if sample - temp_end < min_silence:
                continue
            if temp_end - start > min_speech:
                speeches.append({"start": start, "end": temp_end})
            start, temp_end = None, 0
    if start is not None and length_samples - start > min_speech:
        speeches.append({"start": start, "end": length_samples})
    return _pad(speeches, RATE * speech_pad_ms / 1000, length_samples)


def _pad(speeches: list[dict[str, int]], pad: float, length_samples: int) -> list[dict[str, int]]:
    """Widen each segment by `pad` samples, splitting the gap when neighbours are closer than 2 pads."""
    for i, speech in enumerate(speeches):
        if i == 0:
            speech["start"] = int(max(0, speech["start"] - pad))
        if i != len(speeches) - 1:
            gap = speeches[i + 1]["start"] - speech["end"]
            if gap < 2 * pad:
                speech["end"] += int(gap // 2)
                speeches[i + 1]["start"] = int(max(0, speeches[i + 1]["start"] - gap // 2))
            else:
                speech["end"] = int(min(length_samples, speech["end"] + pad))
                speeches[i + 1]["start"] = int(max(0, speeches[i + 1]["start"] - pad))
        else:
            speech["end"] = int(min(length_samples, speech["end"] + pad))
    return speeches
