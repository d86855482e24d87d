"""Captured decode steps: one per row bucket (flash-attn) or per (row bucket, length bucket) (SDPA).

On CUDA a step is a few hundred small kernels, and launching them one by one from Python costs more
than the GPU needs to run them. `StepGraphs` captures `decode_step` once per shape and replays it:
rows are padded up to a bucket (1, 2, 4, 8, then multiples of 16) with idle rows that write their
own slot 0 and see one slot. Attention that reads each row's length itself (flash-attn) needs no
length in the key; SDPA's length is rounded up to a multiple of 256 with a key mask. Per-step inputs
(positions, and write slots and visible lengths per layer group) are copied into static buffers;
entry moves, speech copies and token choice stay outside the graph.

The contract: every tensor a captured step reads or writes is registered (`inputs`) and its storage
is recorded at capture; the store replaces its tensors only in `allocate`/`ensure`, which bump its
`generation`, and a changed generation empties the cache (`graphs`) before anything reads it.
`contract_holds` states it; `EmulatedCapture` runs the same static-buffer path eagerly (any device)
and refuses to replay a step whose inputs moved. The eager `decode_step` is always the reference.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import torch

from engine.decode.attention import Attention
from engine.decode.fused import FusedModel
from engine.decode.kv_store import KVStore
from engine.decode.step import ModelParts, StepInputs, decode_step

LENGTH_BUCKET = 256
Step = Callable[[], torch.Tensor]
Inputs = Callable[[], dict[str, torch.Tensor]]  # the registered inputs as they are now


def row_bucket(n: int, rows: int) -> int:
    """The captured batch size that holds n rows."""
    for size in (1, 2, 4, 8):
        if n <= size:
            return min(size, rows)
    return min(-(-n // 16) * 16, rows)


class Replay(Protocol):
    def replay(self) -> torch.Tensor:
        """Run the captured step; its logits (rows, V)."""
        ...


class CudaCapture:
    """`torch.cuda.CUDAGraph` capture; all graphs share one memory pool."""

    def __init__(self) -> None:
        self.pool: tuple[int, int] | None = None

    def __call__(self, step: Step, inputs: Inputs) -> Replay:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up (compiles glue): writes what the replay will write
            step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.pool):
            logits = step()
        self.pool = graph.pool()
        return _CudaReplay(graph, logits)


@dataclass(frozen=True, slots=True, eq=False)
class _CudaReplay:
    graph: torch.cuda.CUDAGraph
    logits: torch.Tensor  # (rows, V), written by every replay

    def replay(self) -> torch.Tensor:
        self.graph.replay()
        return self.logits


class EmulatedCapture:
    """Runs the captured step's code eagerly on every replay, on any device, and checks that none
    of its registered inputs was reallocated since "capture" (a real graph would read freed memory)."""

    def __call__(self, step: Step, inputs: Inputs) -> Replay:
        return _EmulatedReplay(step, inputs, storages(inputs()))


@dataclass(frozen=True, slots=True, eq=False)
class _EmulatedReplay:
    step: Step
    inputs: Inputs
    recorded: dict[str, int]

    def replay(self) -> torch.Tensor:
        moved = [name for name, ptr in storages(self.inputs()).items() if ptr != self.recorded[name]]
        if moved:
            raise RuntimeError(f"a captured step's inputs were reallocated: {', '.join(moved)}")
        return self.step()


def storages(inputs: dict[str, torch.Tensor]) -> dict[str, int]:
    return {name: t.untyped_storage().data_ptr() for name, t in inputs.items()}


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
        capture: Callable[[Step, Inputs], Replay],
    ) -> None:
        self.parts, self.model, self.store, self.attention = parts, model, store, attention
        self.capture, self.layer_group = capture, layer_group
        self.tokens = tokens  # (B,) the runner's persistent "token each row feeds" buffer
        rows, device, groups = store.rows, store.device, max(layer_group) + 1
        self.positions = torch.zeros(rows, dtype=torch.int64, device=device)  # (B,)
        self.slots = torch.zeros(groups, rows, dtype=torch.int64, device=device)  # (G, B)
        self.seqlen = torch.ones(groups, rows, dtype=torch.int64, device=device)  # (G, B)
        self.capture_seconds = 0.0  # spent capturing (and compiling the glue on first use)
        self._graphs: dict[tuple[int, ...], _Entry] = {}
        self._generation = store.generation

    @property
    def graphs(self) -> dict[tuple[int, ...], _Entry]:
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
            "offsets": self.store.offsets,
        }

    def contract_holds(self) -> bool:
        """No captured step would read or write a tensor that has been reallocated since capture."""
        now = storages(self.inputs())
        return all(entry.inputs == now for entry in self.graphs.values())

    def run(
        self, positions: torch.Tensor, slots: torch.Tensor, seqlen: torch.Tensor, length: int
    ) -> torch.Tensor:
        """Logits (n, V) of rows 0..n-1, like `decode_step` with these inputs (slots, seqlen: (G, n))."""
        n = positions.shape[0]
        rows = row_bucket(n, self.store.rows)
        self.positions[:n], self.slots[:, :n], self.seqlen[:, :n] = positions, slots, seqlen
        self.positions[n:rows], self.slots[:, n:rows], self.seqlen[:, n:rows] = 0, 0, 1  # idle rows
        key = self._key(rows, length)
        entry = self.graphs.get(key) or self._capture(key)
        return entry.replay.replay()[:n]

    def _key(self, rows: int, length: int) -> tuple[int, ...]:
        if self.attention.reads_lengths:  # the kernel reads seqlen: no length in the key
            return (rows,)
        return (rows, min(-(-length // LENGTH_BUCKET) * LENGTH_BUCKET, self.store.capacity))

    def _step(self, key: tuple[int, ...]) -> torch.Tensor:
        rows = key[0]
        inputs = StepInputs(
            tokens=self.tokens[:rows],
            positions=self.positions[:rows],
            write=tuple(self.store.flat_index(s[:rows]) for s in self.slots),
            seqlen=self.seqlen[:, :rows],
            length=key[1] if len(key) > 1 else self.store.capacity,
            ragged=(True,) * self.slots.shape[0],
            layer_group=self.layer_group,
        )
        return decode_step(self.parts, self.model, self.store, self.attention, inputs)

    def _capture(self, key: tuple[int, ...]) -> _Entry:
        started = time.perf_counter()
        entry = _Entry(self.capture(lambda: self._step(key), self.inputs), storages(self.inputs()))
        self.graphs[key] = entry
        self.capture_seconds += time.perf_counter() - started
        return entry
