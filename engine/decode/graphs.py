"""Captured decode steps: one per row bucket (flash-attn, split-kv) or per (row bucket, length
bucket) (SDPA).

On CUDA a step is a few hundred small kernels, and launching them one by one from Python costs more
than the GPU needs to run them. `StepGraphs` captures `decode_step` once per shape and replays it:
rows are padded up to a bucket (1, 2, 4, 8, then multiples of 16) with idle rows that write their
own slot 0 and see one slot. Attention that reads each row's length itself (flash-attn, split-kv)
needs no length in the key, and `capture_buckets` captures every row bucket largest-first when the
batch starts; SDPA's length is rounded up to a multiple of 256 with a key mask, captured lazily.
Per-step inputs (positions, and write slots and visible lengths per layer group) are copied on the
device into static buffers. When the policy moves entries, the step's entry moves (and speech copies,
when the store keeps speech) run inside the graph too, every step: their (rows, src, dst) lists are
padded to a size fixed by the row bucket (`transfer_size`) with self-copies of the store's scratch
slot (the last one, which no row uses), so the key stays the row bucket. A step that moves more
runs all its transfers eagerly before the replay (padding only in the graph). Token choice stays
outside the graph.

The contract: every tensor a captured step reads or writes is registered (`inputs`) and its storage
is recorded at capture; the store replaces its tensors only in `allocate`/`ensure`, which bump its
`generation`, and a changed generation empties the cache (`graphs`) before anything reads it.
`contract_holds` states it; `capture.EmulatedCapture` runs the same static-buffer path eagerly (any
device) and refuses to replay a step whose inputs moved. The eager `decode_step` is always the
reference.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from engine.decode.attention import Attention
from engine.decode.capture import Inputs, Replay, Step, storages
from engine.decode.fused import FusedModel
from engine.decode.kv_store import KVStore
from engine.decode.step import ModelParts, StepInputs, decode_step

LENGTH_BUCKET = 256
TRANSFER_BUCKET = 64  # entries a captured step moves per 8 rows (padding is cheap, captures are not)
Transfer = tuple[np.ndarray, np.ndarray, np.ndarray]  # (rows, src, dst) of one layer group


def transfer_size(rows: int) -> int:
    """Entries the captured step of a row bucket moves per layer group and kind (padded)."""
    return TRANSFER_BUCKET * max(1, -(-rows // 8))


def row_bucket(n: int, rows: int) -> int:
    """The captured batch size that holds n rows."""
    for size in (1, 2, 4, 8):
        if n <= size:
            return min(size, rows)
    return min(-(-n // 16) * 16, rows)


@dataclass(frozen=True, slots=True)
class _Key:
    rows: int  # row bucket
    span: int  # attention length bucket; -1 where the kernel reads each row's length
    moves: int  # padded size of each group's entry moves (0: the policy moves nothing)
    speech: int  # padded size of each group's speech copies (0: the store keeps no speech)


def _span(length: int, capacity: int) -> int:
    return min(-(-length // LENGTH_BUCKET) * LENGTH_BUCKET, capacity)


@dataclass(frozen=True, slots=True, eq=False)
class _Entry:
    replay: Replay
    inputs: dict[str, int]  # storage of every registered input at capture


class StepGraphs:
    def __init__(
        self,
        parts: ModelParts,
        model: FusedModel,
        store: KVStore,
        attention: Attention,
        tokens: torch.Tensor,
        layer_group: tuple[int, ...],
        group_layers: list[torch.Tensor],
        capture: Callable[[Step, Inputs], Replay],
        moves: bool = True,
    ) -> None:
        self.parts, self.model, self.store, self.attention = parts, model, store, attention
        self.moves = moves  # whether the policy ever moves entries (else no transfers are captured)
        self.capture, self.layer_group, self.group_layers = capture, layer_group, group_layers
        self._transfers: dict[tuple[str, int, int], torch.Tensor] = {}  # (kind, group, size) → (3, size)
        self.tokens = tokens  # (B,) the runner's persistent "token each row feeds" buffer
        rows, device, groups = store.rows, store.device, max(layer_group) + 1
        self.positions = torch.zeros(rows, dtype=torch.int64, device=device)  # (B,)
        self.slots = torch.zeros(groups, rows, dtype=torch.int64, device=device)  # (G, B)
        self.seqlen = torch.ones(groups, rows, dtype=torch.int64, device=device)  # (G, B)
        self.capture_seconds = 0.0  # spent capturing (and compiling the glue on first use)
        self._graphs: dict[_Key, _Entry] = {}
        self._generation = store.generation

    @property
    def graphs(self) -> dict[_Key, _Entry]:
        """The captured steps, by key; emptied as soon as the store has been reallocated."""
        if self.store.generation != self._generation:
            self._graphs.clear()
            self._generation = self.store.generation
        return self._graphs

    def inputs(self) -> dict[str, torch.Tensor]:
        """Every tensor a captured step reads or writes, by name."""
        return {
            "tokens": self.tokens,
            "positions": self.positions,
            "slots": self.slots,
            "seqlen": self.seqlen,
            "kv": self.store.kv,
            "sk": self.store.sk,
            "sv": self.store.sv,
            "offsets": self.store.offsets,
            **{f"layers{g}": layers for g, layers in enumerate(self.group_layers)},
            **{f"{kind}{g}/{size}": buf for (kind, g, size), buf in self._transfers.items()},
        }

    def contract_holds(self) -> bool:
        """No captured step would read or write a tensor that has been reallocated since capture."""
        now = storages(self.inputs())  # inputs registered later (new transfer sizes) leave old steps alone
        return all(
            now.get(name) == ptr for entry in self.graphs.values() for name, ptr in entry.inputs.items()
        )

    def sizes(self, n: int) -> tuple[int, int]:
        """Padded (moves, speech) sizes per group of the captured step for n rows."""
        size = transfer_size(row_bucket(n, self.store.rows))
        return (size if self.moves else 0), (size if self.store.speech_capacity else 0)

    def padded(
        self, n: int, moves: tuple[Transfer | None, ...], speech: tuple[Transfer | None, ...]
    ) -> tuple[list[np.ndarray], bool]:
        """The step's transfer lists padded for the captured step (host, (3, size) each: moves of
        every group, then speech copies), and whether they fit; if not, every list is padding and
        the caller runs the transfers eagerly before the replay."""
        sized = tuple(zip(("move", "speech"), self.sizes(n), (moves, speech), strict=True))
        fits = all(t is None or t[0].size <= size for _, size, ts in sized if size for t in ts)
        out = []
        for kind, size, transfers in sized:
            if not size:
                continue
            for group in range(self.slots.shape[0]):
                transfer = transfers[group] if group < len(transfers) and fits else None
                out.append(self._pad(kind, size, transfer))
        return out, fits

    def _pad(self, kind: str, size: int, transfer: Transfer | None) -> np.ndarray:
        count = 0 if transfer is None else int(transfer[0].size)
        host = np.zeros((3, size), dtype=np.int64)  # padding: row 0, scratch slot
        host[1:, count:] = self.store.capacity - 1
        if kind == "speech":
            host[1, count:] = 0  # speech index 0 → the scratch slot
        if count:
            host[:, :count] = transfer
        return host

    def run(
        self,
        positions: torch.Tensor,
        slots: torch.Tensor,
        seqlen: torch.Tensor,
        length: int,
        transfers: Sequence[torch.Tensor] = (),
    ) -> torch.Tensor:
        """Logits (n, V) of rows 0..n-1, like the transfers then `decode_step` with these device
        inputs (slots, seqlen: (G, n); `transfers`: `padded`'s lists, on the device)."""
        n = positions.shape[0]
        key = self._key(n, length)
        self.positions[:n], self.slots[:, :n], self.seqlen[:, :n] = positions, slots, seqlen
        self.positions[n : key.rows], self.slots[:, n : key.rows], self.seqlen[:, n : key.rows] = 0, 0, 1
        for buffer, transfer in zip(self._buffers(key), transfers, strict=True):
            buffer.copy_(transfer)
        entry = self.graphs.get(key) or self._capture(key)
        return entry.replay.replay()[:n]

    def capture_buckets(self) -> None:
        """Capture every row bucket's step, largest first (attention that reads lengths only: the
        key has no length), so that no capture happens while decoding."""
        if not self.attention.reads_lengths:
            return
        self.positions.zero_()  # every row idle: writes its slot 0, sees one slot
        self.slots.zero_()
        self.seqlen.fill_(1)
        for rows in sorted(
            {row_bucket(n, self.store.rows) for n in range(1, self.store.rows + 1)}, reverse=True
        ):
            key = self._key(rows, 1)
            for buffer, host in zip(self._buffers(key), self.padded(rows, (), ())[0], strict=True):
                buffer.copy_(torch.from_numpy(host))
            if key not in self.graphs:
                self._capture(key)

    def _key(self, n: int, length: int) -> _Key:
        rows = row_bucket(n, self.store.rows)
        span = -1 if self.attention.reads_lengths else _span(length, self.store.capacity)
        return _Key(rows, span, *self.sizes(n))

    def _buffers(self, key: _Key) -> list[torch.Tensor]:
        """The static transfer buffers of a key, in `padded`'s order."""
        groups = range(self.slots.shape[0])
        return [
            self._buffer(kind, g, size)
            for kind, size in (("move", key.moves), ("speech", key.speech))
            if size
            for g in groups
        ]

    def _buffer(self, kind: str, group: int, size: int) -> torch.Tensor:
        found = self._transfers.get((kind, group, size))
        if found is None:
            found = torch.zeros(3, size, dtype=torch.int64, device=self.store.device)
            self._transfers[kind, group, size] = found
        return found

    def _step(self, key: _Key) -> torch.Tensor:
        for kind, size in (("move", key.moves), ("speech", key.speech)):
            for group in range(self.slots.shape[0]) if size else ():
                rows, src, dst = self._buffer(kind, group, size)
                transfer = self.store.move if kind == "move" else self.store.copy_speech
                transfer(self.group_layers[group], rows, src, dst)
        inputs = StepInputs(
            tokens=self.tokens[: key.rows],
            positions=self.positions[: key.rows],
            write=tuple(self.store.flat_index(s[: key.rows]) for s in self.slots),
            seqlen=self.seqlen[:, : key.rows],
            length=key.span if key.span > 0 else self.store.capacity,
            ragged=(True,) * self.slots.shape[0],
            layer_group=self.layer_group,
        )
        return decode_step(self.parts, self.model, self.store, self.attention, inputs)

    def _capture(self, key: _Key) -> _Entry:
        started = time.perf_counter()
        entry = _Entry(self.capture(lambda: self._step(key), self.inputs), storages(self.inputs()))
        self.graphs[key] = entry
        self.capture_seconds += time.perf_counter() - started
        return entry
