"""CUDA graphs of the decode step: one capture per (row bucket, attention-length bucket).

On CUDA a step is hundreds of small kernels, and launching them one by one from Python costs more
than the GPU needs to run them. `StepGraphs` captures `decode_step` once per shape and replays it:
rows are padded up to a bucket (1, 2, 4, 8, then multiples of 16) with idle rows that write their
own slot 0 and see one slot, and the attention length is rounded up to a multiple of 256 with a key
mask, so a run needs only a handful of graphs. Per-step inputs are copied into static buffers;
entry moves, speech copies and token choice stay outside the graph. Graphs share one memory pool and are
dropped when the store is reallocated. The eager `decode_step` is always the reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from engine.decode.attention import Attention
from engine.decode.kv_store import KVStore
from engine.decode.step import ModelParts, StepInputs, decode_step

LENGTH_BUCKET = 256


def row_bucket(n: int, rows: int) -> int:
    """The captured batch size that holds n rows."""
    for size in (1, 2, 4, 8):
        if n <= size:
            return min(size, rows)
    return min(-(-n // 16) * 16, rows)


@dataclass(frozen=True, slots=True, eq=False)
class _Captured:
    graph: torch.cuda.CUDAGraph
    logits: torch.Tensor  # (rows, V), written by every replay


class StepGraphs:
    def __init__(
        self,
        parts: ModelParts,
        store: KVStore,
        attention: Attention,
        tokens: torch.Tensor,
        layer_group: tuple[int, ...],
    ) -> None:
        self.parts, self.store, self.attention = parts, store, attention
        self.tokens = tokens  # (B,) the runner's persistent "token each row feeds" buffer
        rows, device = store.rows, store.device
        self.positions = torch.zeros(rows, dtype=torch.int64, device=device)  # (B,)
        self.layer_group = layer_group
        groups = max(layer_group) + 1
        self.slots = torch.zeros(groups, rows, dtype=torch.int64, device=device)  # (G, B)
        self.seqlen = torch.ones(groups, rows, dtype=torch.int64, device=device)  # (G, B)
        self.graphs: dict[tuple[int, int], _Captured] = {}
        self.pool: tuple[int, int] | None = None
        self.store_at = store.k.data_ptr()

    def run(
        self, positions: torch.Tensor, slots: torch.Tensor, seqlen: torch.Tensor, length: int
    ) -> torch.Tensor:
        """Logits (n, V) of rows 0..n-1, like `decode_step` with these inputs (slots, seqlen: (G, n))."""
        n = positions.shape[0]
        rows = row_bucket(n, self.store.rows)
        span = min(-(-length // LENGTH_BUCKET) * LENGTH_BUCKET, self.store.capacity)
        if self.store.k.data_ptr() != self.store_at:  # the store grew: captured addresses are stale
            self.graphs.clear()
            self.store_at = self.store.k.data_ptr()
        self.positions[:n], self.slots[:, :n], self.seqlen[:, :n] = positions, slots, seqlen
        self.positions[n:rows], self.slots[:, n:rows], self.seqlen[:, n:rows] = 0, 0, 1  # idle rows
        captured = self.graphs.get((rows, span)) or self._capture(rows, span)
        captured.graph.replay()
        return captured.logits[:n]

    def _step(self, rows: int, span: int) -> torch.Tensor:
        inputs = StepInputs(
            tokens=self.tokens[:rows],
            positions=self.positions[:rows],
            write=tuple(self.store.flat_index(s[:rows]) for s in self.slots),
            seqlen=self.seqlen[:, :rows],
            length=span,
            ragged=(True,) * self.slots.shape[0],
            layer_group=self.layer_group,
        )
        return decode_step(self.parts, self.store, self.attention, inputs)

    def _capture(self, rows: int, span: int) -> _Captured:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up: writes the same entries the replay will write
            self._step(rows, span)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.pool):
            logits = self._step(rows, span)
        self.pool = graph.pool()
        captured = _Captured(graph, logits)
        self.graphs[(rows, span)] = captured
        return captured
