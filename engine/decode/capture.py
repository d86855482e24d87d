"""How a decode step is captured for replay: a CUDA graph (`CudaCapture`) or its eager stand-in
(`EmulatedCapture`).

A capture takes the step (a function returning its logits) and its registered inputs (a function
returning every tensor the step reads or writes, by name) and gives a `Replay`. `CudaCapture` warms
the step up on a side stream (compiling the glue), captures it into a `torch.cuda.CUDAGraph` and
replays the graph, whose logits tensor every replay rewrites. The graphs share one private memory
pool (`SharedPool`) while any of them is alive: CUDA's caching allocator refuses (an internal
assert, which also leaves the RNG in capture state) a capture into a pool whose graphs are all gone
while its blocks are still held, as after the store grows and the cache of captured steps is emptied.
`EmulatedCapture` runs the step's code on every replay, on any device; it refuses to replay once one
of the inputs recorded at capture has been reallocated (a real graph would read freed memory) and to
capture into a pool none of whose graphs is alive (the allocator's rule): the CPU's check of
`graphs.StepGraphs`'s contract.
"""

from __future__ import annotations

import itertools
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import torch

Step = Callable[[], torch.Tensor]
Inputs = Callable[[], dict[str, torch.Tensor]]  # the registered inputs as they are now


class Replay(Protocol):
    def replay(self) -> torch.Tensor:
        """Run the captured step; its logits (rows, V)."""
        ...


class SharedPool:
    """The pool the next capture joins: the last capture's, while a graph captured into it is
    alive; None (a new pool) once every one of them has been released."""

    def __init__(self) -> None:
        self.handle: Any = None
        self._live: weakref.WeakSet[Replay] = weakref.WeakSet()

    def current(self) -> Any:
        if not self._live:
            self.handle = None
        return self.handle

    def joined(self, replay: Replay, handle: Any) -> None:
        self._live.add(replay)
        self.handle = handle


class CudaCapture:
    """`torch.cuda.CUDAGraph` capture; live graphs share one memory pool."""

    def __init__(self) -> None:
        self.pool = SharedPool()

    def __call__(self, step: Step, inputs: Inputs) -> Replay:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up (compiles glue): writes what the replay will write
            step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        # thread_local: the app decodes in a worker thread; other threads' CUDA calls stay legal
        with torch.cuda.graph(graph, pool=self.pool.current(), capture_error_mode="thread_local"):
            logits = step()
        replay = _CudaReplay(graph, logits)
        self.pool.joined(replay, graph.pool())
        return replay


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class _CudaReplay:
    graph: torch.cuda.CUDAGraph
    logits: torch.Tensor  # (rows, V), written by every replay

    def replay(self) -> torch.Tensor:
        self.graph.replay()
        return self.logits


class EmulatedCapture:
    """Runs the captured step's code eagerly on every replay, on any device, and checks what CUDA
    would refuse: a step whose registered inputs were reallocated since "capture" (a real graph
    would read freed memory), a capture into a pool none of whose graphs is alive."""

    def __init__(self) -> None:
        self.pool = SharedPool()
        self._handles = itertools.count(1)
        self._graphs_in: Counter[int] = Counter()  # live graphs per pool handle, as CUDA counts them

    def __call__(self, step: Step, inputs: Inputs) -> Replay:
        handle = self.pool.current()
        if handle is None:
            handle = next(self._handles)
        elif self._graphs_in[handle] == 0:
            raise RuntimeError(f"captured into memory pool {handle}, none of whose graphs is alive")
        replay = _EmulatedReplay(step, inputs, storages(inputs()))
        self._graphs_in[handle] += 1
        weakref.finalize(replay, self._graphs_in.subtract, [handle])
        self.pool.joined(replay, handle)
        return replay


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
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
