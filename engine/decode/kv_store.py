"""Preallocated keys and values for a fixed number of rows, written in place.

`k`, `v` are (L, B, Hkv, C, D): per layer, per row, per KV head, C slots of head size D (the layout
SDPA reads directly; flash kernels take a transposed view). In each layer a row's entries fill a
dense prefix of its slots, placed by `slots.RowSlots`; layers of one group share a slot map.
Keys are stored after RoPE, at their original absolute positions, and are never rewritten.
`sk`, `sv` (L, B, Hkv, S, D) hold a row's full speech KV only for policies that bring speech back
(`speech-follow`); policies that only drop entries need no second copy (S = 0). Growing the store
copies it once; a step copies at most the entries it drops or brings back.
"""

from __future__ import annotations

import numpy as np
import torch

from engine.decode.layout import RowLayout


class KVStore:
    def __init__(
        self,
        layers: int,
        kv_heads: int,
        head_dim: int,
        rows: int,
        dtype: torch.dtype,
        device: torch.device,
        memory_limit: int | None = None,
    ) -> None:
        self.shape = (layers, rows, kv_heads, 0, head_dim)
        self.dtype, self.device, self.memory_limit = dtype, device, memory_limit
        self.k = self.v = self._empty(0)  # (L, B, Hkv, C, D)
        self.sk = self.sv = self._empty(0)  # (L, B, Hkv, S, D)
        self._flatten()

    @property
    def rows(self) -> int:
        return self.shape[1]

    @property
    def capacity(self) -> int:
        return int(self.k.shape[3])

    @property
    def speech_capacity(self) -> int:
        return int(self.sk.shape[3])

    def nbytes(self, capacity: int, speech_capacity: int) -> int:
        layers, rows, heads, _, dim = self.shape
        return 2 * layers * rows * heads * (capacity + speech_capacity) * dim * self.dtype.itemsize

    def ensure(self, capacity: int, speech_capacity: int = 0) -> None:
        """Make room for `capacity` slots and `speech_capacity` speech tokens per row (keeps data)."""
        capacity = _round_up(max(capacity, self.capacity), 64)
        speech_capacity = _round_up(max(speech_capacity, self.speech_capacity), 64)
        if capacity == self.capacity and speech_capacity == self.speech_capacity:
            return
        limit = self.memory_limit
        if limit is not None and self.nbytes(capacity, speech_capacity) > limit:
            raise torch.OutOfMemoryError(
                f"KV store of {self.nbytes(capacity, speech_capacity)} bytes exceeds the limit {limit}"
            )
        self.k, self.v = self._grown(self.k, capacity), self._grown(self.v, capacity)
        self.sk, self.sv = self._grown(self.sk, speech_capacity), self._grown(self.sv, speech_capacity)
        self._flatten()

    def import_row(
        self,
        row: int,
        layout: RowLayout,
        keys: torch.Tensor,
        values: torch.Tensor,
        held: list[np.ndarray],
    ) -> None:
        """Fill a row from prefill KV (L, Hkv, T, D) of positions 0..T-1.

        `held[g]` lists the positions layer group g keeps, in slot order (`RowSlots.held`).
        """
        speech = layout.speech_len if layout.follows else 0
        self.ensure(layout.capacity, speech)
        for group, positions in enumerate(held):
            layers = _group_layers(layout.layer_group, group, keys.device)
            index = torch.from_numpy(positions).to(keys.device)
            count = positions.size
            picked_k = keys[layers][:, :, index].to(self.device, self.dtype)  # (Lg, Hkv, count, D)
            picked_v = values[layers][:, :, index].to(self.device, self.dtype)
            self.k[layers.to(self.device), row, :, :count] = picked_k
            self.v[layers.to(self.device), row, :, :count] = picked_v
        if speech:
            span = slice(layout.speech_start, layout.speech_start + speech)
            self.sk[:, row, :, :speech] = keys[:, :, span].to(self.device, self.dtype)
            self.sv[:, row, :, :speech] = values[:, :, span].to(self.device, self.dtype)

    def write(self, layer: int, keys: torch.Tensor, values: torch.Tensor, flat: torch.Tensor) -> None:
        """Write one new token per row: keys, values (n, Hkv, D) at flat indices from `flat_index`."""
        dim = self.shape[4]
        self._k_flat[layer].index_copy_(0, flat, keys.reshape(-1, dim))
        self._v_flat[layer].index_copy_(0, flat, values.reshape(-1, dim))

    def flat_index(self, slots: torch.Tensor) -> torch.Tensor:
        """Flat (row, head, slot) indices of rows 0..n-1 writing at `slots` (n,) → (n·Hkv,)."""
        return (self._row_starts[: slots.shape[0]] + slots[:, None]).reshape(-1)

    def move(self, layers: torch.Tensor, rows: torch.Tensor, src: torch.Tensor, dst: torch.Tensor) -> None:
        """Move entries within rows, in the given layers: k[layers, rows, :, src] → k[..., dst]."""
        lay = layers[:, None]  # (Lg, 1) against (m,) rows, src, dst
        for buf in (self.k, self.v):
            buf[lay, rows, :, dst] = buf[lay, rows, :, src]

    def copy_speech(
        self, layers: torch.Tensor, rows: torch.Tensor, src: torch.Tensor, dst: torch.Tensor
    ) -> None:
        """Bring speech tokens back in the given layers: sk[layers, rows, :, src] → k[..., dst]."""
        lay = layers[:, None]
        self.k[lay, rows, :, dst] = self.sk[lay, rows, :, src]
        self.v[lay, rows, :, dst] = self.sv[lay, rows, :, src]

    def move_row(self, src: int, dst: int) -> None:
        """Move a row's entries to another row (keeps the occupied rows a prefix)."""
        for buf in (self.k, self.v, self.sk, self.sv):
            buf[:, dst] = buf[:, src]

    def layer(self, layer: int, rows: int, length: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Views of rows 0..rows-1, slots 0..length-1 of one layer: (rows, Hkv, length, D) each."""
        return self.k[layer, :rows, :, :length], self.v[layer, :rows, :, :length]

    def _flatten(self) -> None:
        layers, rows, heads, dim = self.shape[0], self.shape[1], self.shape[2], self.shape[4]
        self._k_flat = self.k.view(layers, -1, dim)  # (L, B·Hkv·C, D) views for one-op writes
        self._v_flat = self.v.view(layers, -1, dim)
        starts = torch.arange(rows * heads, device=self.device).view(rows, heads) * self.capacity
        self._row_starts = starts  # (B, Hkv) flat index of slot 0 of each row's head

    def _empty(self, slots: int) -> torch.Tensor:
        layers, rows, heads, _, dim = self.shape
        return torch.zeros(layers, rows, heads, slots, dim, dtype=self.dtype, device=self.device)

    def _grown(self, old: torch.Tensor, slots: int) -> torch.Tensor:
        if old.shape[3] == slots:
            return old
        new = self._empty(slots)
        new[:, :, :, : old.shape[3]] = old
        return new


def _group_layers(layer_group: tuple[int, ...], group: int, device: torch.device) -> torch.Tensor:
    return torch.tensor([i for i, g in enumerate(layer_group) if g == group], device=device)


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple
