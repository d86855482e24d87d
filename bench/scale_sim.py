"""Scheduling simulation for `bench/scale.py`: a corpus of chunks over G GPU workers, LPT vs FIFO.

It mirrors `engine.distributed.dispatch.Dispatcher`: the driver takes batches of up to B chunks
from the global `ChunkQueue` with the same `plan_fill` ("longest" or "fifo" order; breadth
first, a short queue split evenly between workers; files enter the queue only while fewer chunks
wait than two calls per worker hold, as in the corpus runner), keeps two calls in flight per worker, and a
worker runs its calls one after the other, each call decoding its batch until its longest row is
done (rows that finish early leave their slot idle until the call ends). The cost of a call
comes from the per-chunk decode model of docs/benchmarks.md: decode steps ≈ 9 per second of
audio (2,700 for 300 s), prompt = 100 + 7.5 tokens per second of audio, each step costs the
bandwidth roofline `(weights + active rows × mean visible KV × 57,344 B) / bandwidth` times 1.3
(the target there), with 14.1 GB of weights (what the table's 3.65 ms at batch 16 / KV 3,700 /
4.8 TB/s implies); prefill is compute at an effective 400 TFLOP/s. "Ideal" is perfect balance:
every chunk's full-batch cost summed over all GPUs, or the longest chunk alone if that is
longer.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from engine.distributed.queue import ChunkQueue, Job, plan_fill
from engine.types import Chunk


@dataclass(frozen=True, slots=True)
class CostModel:
    batch: int = 16
    bandwidth: float = 4.8e12  # bytes/s (H200)
    weights: float = 14.1e9  # bytes read per decode step
    kv_bytes: float = 57_344.0  # per token of visible KV, all layers
    steps_per_second: float = 9.0  # output tokens per second of audio
    speech_tokens_per_second: float = 7.5
    prompt_overhead: float = 100.0  # system prompt and instruction tokens
    prefill_flops_per_token: float = 2 * 7.07e9
    compute: float = 4.0e14  # effective FLOP/s of prefill
    slowdown: float = 1.3  # step time over the roofline

    def steps(self, seconds: float) -> float:
        return self.steps_per_second * seconds

    def prompt(self, seconds: float) -> float:
        return self.prompt_overhead + self.speech_tokens_per_second * seconds

    def step_seconds(self, rows: int, mean_kv: float) -> float:
        return self.slowdown * (self.weights + rows * mean_kv * self.kv_bytes) / self.bandwidth

    def prefill_seconds(self, seconds: float) -> float:
        return self.prompt(seconds) * self.prefill_flops_per_token / self.compute

    def call_seconds(self, durations: Sequence[float]) -> float:
        """One batch decoded together until its longest row ends."""
        rows = sorted(durations, key=self.steps)
        total = sum(self.prefill_seconds(d) for d in rows)
        done = 0.0
        for i, d in enumerate(rows):
            active = rows[i:]
            phase = self.steps(d) - done
            if phase > 0:
                mean_kv = sum(self.prompt(a) for a in active) / len(active) + done + phase / 2
                total += phase * self.step_seconds(len(active), mean_kv)
            done = self.steps(d)
        return total

    def full_batch_share(self, seconds: float) -> float:
        """A chunk's cost when it shares every step with a full batch of its like."""
        mean_kv = self.prompt(seconds) + self.steps(seconds) / 2
        step = self.step_seconds(self.batch, mean_kv) / self.batch
        return self.prefill_seconds(seconds) + self.steps(seconds) * step

    def alone(self, seconds: float) -> float:
        mean_kv = self.prompt(seconds) + self.steps(seconds) / 2
        return self.prefill_seconds(seconds) + self.steps(seconds) * self.step_seconds(1, mean_kv)


@dataclass(frozen=True, slots=True)
class Outcome:
    makespan: float
    ideal: float
    chunks: int

    @property
    def ratio(self) -> float:
        return self.makespan / self.ideal


def simulate(
    files: Sequence[Sequence[float]], gpus: int, order: str, model: CostModel, in_flight: int = 2
) -> Outcome:
    """Makespan of `files` (each a list of chunk durations, s) on `gpus` workers."""
    queue = ChunkQueue(order, max_retries=0)
    unread = iter(enumerate(files))
    lookahead = in_flight * model.batch * gpus  # as the corpus runner: read files only this far ahead
    waiting: list[list[float]] = [[] for _ in range(gpus)]  # per worker: durations of queued calls

    def dispatch() -> None:
        while len(queue) < lookahead and (item := next(unread, None)) is not None:
            f, durations = item
            queue.put(Job(f, Chunk(i, 0.0, d)) for i, d in enumerate(durations))
        for worker, jobs in plan_fill(queue, [len(w) for w in waiting], model.batch, in_flight):
            waiting[worker].append(model.call_seconds([j.seconds for j in jobs]))

    dispatch()
    events = [(waiting[w][0], w) for w in range(gpus) if waiting[w]]
    heapq.heapify(events)
    makespan = 0.0
    while events:
        now, w = heapq.heappop(events)
        makespan = max(makespan, now)
        waiting[w].pop(0)
        dispatch()
        if waiting[w]:
            heapq.heappush(events, (now + waiting[w][0], w))
    every = [d for durations in files for d in durations]
    chunks = len(every)
    ideal = max(sum(model.full_batch_share(d) for d in every) / gpus, max(model.alone(d) for d in every))
    return Outcome(makespan, ideal, chunks)
