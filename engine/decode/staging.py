"""Host → device inputs through two pinned staging buffers, used in turn.

`Staging.put(arrays)` packs a step's integer host arrays (positions, slots, lengths, transfer lists)
into the next pinned buffer, queues one non-blocking copy of it to the device and returns device
tensors shaped like the arrays. The host never waits for the device here: a buffer is rewritten only
after the copy that last read it has finished (an event per buffer), and by then it has, since the
step launched two steps back has already been settled. Copies from pageable memory may make the
driver synchronise; from pinned memory they never do.

On the CPU there is nothing to copy: the arrays are packed into a fresh tensor, which callers may
keep (a later `put` never writes into it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


class Staging:
    def __init__(self, device: torch.device, size: int = 4096) -> None:
        self.device = device
        self.cuda = device.type == "cuda"
        self._host = [torch.empty(size, dtype=torch.int64, pin_memory=self.cuda) for _ in range(2)]
        self._done: list[torch.cuda.Event | None] = [None, None]  # the copy that last read each buffer
        self._turn = 0

    def put(self, arrays: Sequence[np.ndarray]) -> list[torch.Tensor]:
        """Device int64 tensors equal to `arrays`, in order (queued, non-blocking)."""
        total = sum(a.size for a in arrays)
        if not self.cuda:
            flat = torch.from_numpy(_pack(arrays, np.empty(total, dtype=np.int64)))
        else:
            flat = self._copy(arrays, total)
        out, offset = [], 0
        for a in arrays:
            out.append(flat[offset : offset + a.size].view(a.shape))
            offset += a.size
        return out

    def _copy(self, arrays: Sequence[np.ndarray], total: int) -> torch.Tensor:
        turn = self._turn
        self._turn ^= 1
        done = self._done[turn]
        if done is not None:
            done.synchronize()  # the copy two puts back: long finished in steady state
        if self._host[turn].numel() < total:
            self._host[turn] = torch.empty(2 * total, dtype=torch.int64, pin_memory=True)
        host = self._host[turn][:total]
        _pack(arrays, host.numpy())
        flat = host.to(self.device, non_blocking=True)
        event = torch.cuda.Event()
        event.record()
        self._done[turn] = event
        return flat


def _pack(arrays: Sequence[np.ndarray], out: np.ndarray) -> np.ndarray:
    offset = 0
    for a in arrays:
        out[offset : offset + a.size] = a.ravel()
        offset += a.size
    return out
