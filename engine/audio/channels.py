"""Which channel of a multi-channel recording is transcribed, and whether mixing them loses it.

- `parse_channel(value)`: "mix" (the mean of the channels, the default), "left" (0), "right" (1)
  or a channel number from 0, as an int or its digits; returns the channel number, or None for
  the mix. Anything else raises ValueError naming what is allowed.
- `Mixer(channel)`: `mixer(block)` turns a (channels, frames) float32 block into (frames,): the
  mean of the channels, or the chosen one (a channel the file lacks raises `AudioDecodeError`).
  While mixing it sums the energy of the mix and of each channel over the whole file:
  `cancelling()` names the loudest channel when the channels carry sound (RMS above `AUDIBLE`)
  yet their mean is `CANCEL_DB` or more quieter than that channel, as opposite-phase stereo (one
  side wired inverted) is: its mean is silence. Independent channels (a speaker on each side)
  lose at most 6 dB when mixed, so they never count as cancelling.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.errors import AudioDecodeError

CHANNEL_NAMES = {"mix": None, "left": 0, "right": 1}
AUDIBLE = 1e-3  # RMS of a channel that carries sound (-60 dBFS)
CANCEL_DB = 20.0  # the mix this much quieter than the loudest channel: the channels cancel


def parse_channel(value: str | int | None) -> int | None:
    """The channel number `value` names (None: the mix of all channels)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"channel must be mix, left, right or a number from 0, got {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.strip().lower() in CHANNEL_NAMES:
        return CHANNEL_NAMES[value.strip().lower()]
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    else:
        raise ValueError(f"channel must be mix, left, right or a number from 0, got {value!r}")
    if number < 0:
        raise ValueError(f"channel must be mix, left, right or a number from 0, got {value!r}")
    return number


class Mixer:
    """Blocks of every channel to one channel (see the module contract)."""

    def __init__(self, path: Path, channel: int | None = None) -> None:
        self.path = path
        self.channel = channel
        self._mix_energy = 0.0
        self._energy: np.ndarray | None = None  # (channels,) sum of squares of each channel
        self._frames = 0

    def __call__(self, block: np.ndarray) -> np.ndarray:
        """(channels, frames) float32 → (frames,) float32."""
        count = block.shape[0]
        if self.channel is not None:
            if self.channel >= count:
                raise AudioDecodeError(
                    f"'{self.path.name}' has {count} channel{'s' if count > 1 else ''} (0–{count - 1}); "
                    f"it has no channel {self.channel}"
                )
            return np.ascontiguousarray(block[self.channel])
        if count == 1:
            return block[0]
        mix = block.mean(axis=0, dtype=np.float32)
        energy = np.einsum("cf,cf->c", block, block, dtype=np.float64)  # (channels,)
        self._energy = energy if self._energy is None else self._energy + energy
        self._mix_energy += float(np.dot(mix, mix))
        self._frames += block.shape[1]
        return mix

    def cancelling(self) -> int | None:
        """The loudest channel when mixing the channels cancelled them out; None when it did not."""
        if self._energy is None or not self._frames:
            return None
        loudest = int(np.argmax(self._energy))
        top = float(self._energy[loudest])
        if np.sqrt(top / self._frames) < AUDIBLE:
            return None
        return loudest if self._mix_energy < top * 10 ** (-CANCEL_DB / 10) else None
