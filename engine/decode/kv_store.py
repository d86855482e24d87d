"""Keys and values for a fixed number of rows, allocated once and written in place.

`kv` is (L, 2, B, Hkv, C, D): per layer, keys then values, per row, per KV head, C slots of head size
D; `k` and `v` are its (L, B, Hkv, C, D) views (the layout SDPA reads directly; flash kernels take a
transposed view). In each layer a row's entries fill a dense prefix of its slots, placed by
`slots.RowSlots`; layers of one group share a slot map. Keys are stored after RoPE, at their
original absolute positions, and are never rewritten. `sk`, `sv` (L, B, Hkv, S, D) hold a row's full
speech KV only for policies that bring speech back (`speech-follow`); policies that only drop
entries need no second copy (S = 0). A step copies at most the entries it drops or brings back.

Graph safety: every tensor a captured step reads (`kv` and the write offsets) is replaced only by
`allocate` or `ensure`, which bump `generation`; holders of captured steps drop them when it
changes. The decoder sizes the store once per batch (`allocate`, which frees the old buffers
first) and never grows it while decoding; `ensure` grows it (copying, so twice the memory for a
moment) only for callers that capture nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

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
        self.max_rows = rows
        self.dtype, self.device, self.memory_limit = dtype, device, memory_limit
        self.generation = 0
        self._set(self._zeros(2, 0), self._zeros(1, 0), self._zeros(1, 0))

    @property
    def rows(self) -> int:
        return self.shape[1]

    @property
    def capacity(self) -> int:
        return int(self.kv.shape[4])

    @property
    def speech_capacity(self) -> int:
        return int(self.sk.shape[3])

    def nbytes(self, capacity: int, speech_capacity: int, rows: int | None = None) -> int:
        layers, own_rows, heads, _, dim = self.shape
        rows = own_rows if rows is None else rows
        return 2 * layers * rows * heads * (capacity + speech_capacity) * dim * self.dtype.itemsize

    def fits(self, capacity: int, speech_capacity: int = 0) -> bool:
        return capacity <= self.capacity and speech_capacity <= self.speech_capacity

    def allocate(self, capacity: int, speech_capacity: int = 0, rows: int | None = None) -> None:
        """Fresh zeroed buffers for `capacity` slots and `speech_capacity` speech tokens per row, for
        `rows` rows (None: as many as before; never more than the store was built with).

        The old buffers are released first, so the peak is one store, not two.
        """
        capacity, speech_capacity = round_up(capacity, 64), round_up(speech_capacity, 64)
        if rows is not None:
            if not 1 <= rows <= self.max_rows:
                raise ValueError(f"a store of at most {self.max_rows} rows cannot hold {rows}")
            self.shape = (self.shape[0], rows, *self.shape[2:])
        self._check_limit(capacity, speech_capacity)
        self._set(self._zeros(2, 0), self._zeros(1, 0), self._zeros(1, 0))
        self._set(self._zeros(2, capacity), self._zeros(1, speech_capacity), self._zeros(1, speech_capacity))

    def ensure(self, capacity: int, speech_capacity: int = 0) -> None:
        """Make room for `capacity` slots and `speech_capacity` speech tokens per row (keeps data)."""
        if self.fits(capacity, speech_capacity):
            return
        capacity = round_up(max(capacity, self.capacity), 64)
        speech_capacity = round_up(max(speech_capacity, self.speech_capacity), 64)
        self._check_limit(capacity, speech_capacity)
        kv, sk, sv = (
            self._zeros(2, capacity),
            self._zeros(1, speech_capacity),
            self._zeros(1, speech_capacity),
        )
        kv[..., : self.capacity, :] = self.kv
        sk[..., : self.speech_capacity, :] = self.sk
        sv[..., : self.speech_capacity, :] = self.sv
        self._set(kv, sk, sv)

    def import_row(
        self,
        row: int,
        layout: RowLayout,
        keys: torch.Tensor,
        values: torch.Tensor,
        held: Sequence[np.ndarray | torch.Tensor],
        group_layers: Sequence[torch.Tensor] | None = None,
    ) -> None:
        """Fill a row from prefill KV (L, Hkv, T, D) of positions 0..T-1.

        `held[g]` lists the positions layer group g keeps, in slot order (`RowSlots.held`); as
        tensors on the keys' device (and `group_layers`, each group's layer indices there) nothing
        here copies from the host.
        """
        speech = layout.speech_len if layout.follows else 0
        self.ensure(layout.capacity, speech)
        for group, positions in enumerate(held):
            if group_layers is None:
                layers = _group_layers(layout.layer_group, group, keys.device)
            else:
                layers = group_layers[group]
            if isinstance(positions, np.ndarray):
                positions = torch.from_numpy(positions).to(keys.device)
            count = positions.shape[0]
            picked_k = keys[layers][:, :, positions].to(self.device, self.dtype)  # (Lg, Hkv, count, D)
            picked_v = values[layers][:, :, positions].to(self.device, self.dtype)
            self.k[layers.to(self.device), row, :, :count] = picked_k
            self.v[layers.to(self.device), row, :, :count] = picked_v
        if speech:
            span = slice(layout.speech_start, layout.speech_start + speech)
            self.sk[:, row, :, :speech] = keys[:, :, span].to(self.device, self.dtype)
            self.sv[:, row, :, :speech] = values[:, :, span].to(self.device, self.dtype)

    def flat_index(self, slots: torch.Tensor) -> torch.Tensor:
        """Indices into a layer's flat (2·B·Hkv·C, D) view of rows 0..n-1 writing at `slots` (n,).

        → (n, 2, Hkv): the key entries of every KV head, then the value entries.
        """
        return self.offsets[: slots.shape[0]] + slots[:, None, None]

    def write_kv(self, layer: int, kv: torch.Tensor, index: torch.Tensor) -> None:
        """Write one new token per row: kv (n, 2·Hkv, D), keys then values, at `flat_index` indices."""
        n, _, dim = kv.shape
        self._flat[layer].index_put_((index,), kv.view(n, 2, -1, dim))

    def write(self, layer: int, keys: torch.Tensor, values: torch.Tensor, index: torch.Tensor) -> None:
        """Write keys, values (n, Hkv, D) (or (n, Hkv·D)) at `flat_index` indices."""
        shape = (keys.shape[0], self.shape[2], self.shape[4])
        self.write_kv(layer, torch.cat((keys.reshape(shape), values.reshape(shape)), dim=1), index)

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
        self.kv[:, :, dst] = self.kv[:, :, src]
        for buf in (self.sk, self.sv):
            buf[:, dst] = buf[:, src]

    def layer(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values of one layer: (B, Hkv, C, D) views each."""
        return self._layers[layer]

    def _set(self, kv: torch.Tensor, sk: torch.Tensor, sv: torch.Tensor) -> None:
        layers, rows, heads, dim = self.shape[0], self.shape[1], self.shape[2], self.shape[4]
        self.kv, self.sk, self.sv = kv, sk, sv  # (L, 2, B, Hkv, C, D), (L, B, Hkv, S, D) ×2
        self.k, self.v = kv[:, 0], kv[:, 1]  # (L, B, Hkv, C, D) views
        self._layers = [(kv[i, 0], kv[i, 1]) for i in range(layers)]
        self._flat = kv.view(layers, -1, dim)  # (L, 2·B·Hkv·C, D) views for one-op writes
        capacity = kv.shape[4]
        heads_index = torch.arange(2 * rows * heads, device=self.device).view(2, rows, heads)
        self.offsets = (heads_index * capacity).transpose(0, 1).contiguous()  # (B, 2, Hkv) slot 0 of each
        self.generation += 1

    def _check_limit(self, capacity: int, speech_capacity: int) -> None:
        limit = self.memory_limit
        if limit is not None and self.nbytes(capacity, speech_capacity) > limit:
            raise torch.OutOfMemoryError(
                f"KV store of {self.nbytes(capacity, speech_capacity)} bytes exceeds the limit {limit}"
            )

    def _zeros(self, parts: int, slots: int) -> torch.Tensor:
        layers, rows, heads, _, dim = self.shape
        shape = (layers, parts, rows, heads, slots, dim) if parts == 2 else (layers, rows, heads, slots, dim)
        return torch.zeros(shape, dtype=self.dtype, device=self.device)


def _group_layers(layer_group: tuple[int, ...], group: int, device: torch.device) -> torch.Tensor:
    return torch.tensor([i for i, g in enumerate(layer_group) if g == group], device=device)


def round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


class StoreTooSmall(Exception):
    """A request needs more slots than the store was sized with (the decoder re-sizes and resumes)."""

    def __init__(self, capacity: int, speech_capacity: int) -> None:
        super().__init__(f"a row needs {capacity} slots and {speech_capacity} speech slots")
        self.capacity, self.speech_capacity = capacity, speech_capacity
