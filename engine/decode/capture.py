"""How a decode step is captured for replay: a CUDA graph (`CudaCapture`) or its eager stand-in
(`EmulatedCapture`).

A capture takes the step (a function returning its logits) and its registered inputs (a function
returning every tensor the step reads or writes, by name) and gives a `Replay`. `CudaCapture` warms
the step up on a side stream (compiling the glue), captures it into a `torch.cuda.CUDAGraph` (all
graphs share one memory pool) and replays the graph, whose logits tensor every replay rewrites.
`EmulatedCapture` runs the step's code on every replay, on any device, and refuses to replay once
one of the inputs recorded at capture has been reallocated (a real graph would read freed memory):
the CPU's check of `graphs.StepGraphs`'s contract.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import torch

Step = Callable[[], torch.Tensor]
Inputs = Callable[[], dict[str, torch.Tensor]]  # the registered inputs as they are now


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
        # thread_local: the app decodes in a worker thread; other threads' CUDA calls stay legal
        with torch.cuda.graph(graph, pool=self.pool, capture_error_mode="thread_local"):
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
        now = storages(self.inputs())
        moved = [name for name, ptr in self.recorded.items() if now.get(name) != ptr]
        if moved:
            raise RuntimeError(f"a captured step's inputs were reallocated: {', '.join(moved)}")
        return self.step()


def storages(inputs: dict[str, torch.Tensor]) -> dict[str, int]:
    return {name: t.untyped_storage().data_ptr() for name, t in inputs.items()}
