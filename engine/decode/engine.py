"""Murmur's decoder: batched greedy decoding with KV eviction, row refill and loop recovery.

`MurmurDecoder.decode` takes any number of `DecodeRequest`s (read lazily) and yields a
`DecodeResult` for each as soon as it finishes. It runs a `Scheduler` over at most
`config.max_batch` rows — by default as many as the KV memory budget holds (`EngineConfig.rows`:
`--kv-memory` or the free device memory, up to 1,024; 16 on the CPU without a budget); the store
holds as many of them as the budget allows at the size each row's eviction policy keeps
(`runner.Runner.reserve`). The model's projections are fused
for decoding once, when the decoder is built (`fused.py`). When the device runs out of memory the
batch is abandoned — every unfinished row goes back to the queue to resume after the tokens it has
already produced — the failed store is released (no reference left, then `empty_cache`), and
decoding continues with half the batch; it grows back when the rows in flight would fit twice over.
An anchored row that needs more slots than the budget lets the store grow to leaves the store
alone (`Scheduler._make_room`); when no row fits, or only such rows are left (`StoreTooSmall`), the
rows resume the same way in a store re-sized for them (fewer rows of more slots), without halving. Only
when a single row does not fit is `OutOfMemoryError` reported. Results already yielded are never
recomputed.
"""

from __future__ import annotations

import gc
import threading
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import torch
from torch import nn

from engine.decode.admission import GrowBatch
from engine.decode.api import DecodeRequest, DecodeResult, SegmentBoundary, SpeechAnchor
from engine.decode.config import EngineConfig
from engine.decode.fused import FusedModel
from engine.decode.kv_store import StoreTooSmall
from engine.decode.plan import expected_loss
from engine.decode.sampling import DecodeMode
from engine.decode.scheduler import Scheduler
from engine.decode.step import ModelParts
from engine.decode.work import WorkQueue, WorkSource
from engine.errors import OutOfMemoryError


@dataclass(slots=True)
class RunStats:
    """What the last `decode` call did: decode steps, host CPU time per step (planning, input
    preparation, settling tokens: thread CPU time, so other work on the machine does not count),
    graph capture seconds, the rows each batch's store held (the memory budget's choice)."""

    steps: int = 0
    host_times: list[float] = field(default_factory=list)  # per step: CPU seconds of host work
    capture_seconds: float = 0.0  # capturing steps as CUDA graphs (and compiling their glue)
    batches: list[int] = field(default_factory=list)
    row_steps: int = 0  # Σ occupied rows over steps (rows per step = row_steps / steps)
    growths: int = 0  # times a store grew its rows' slots in place while decoding

    @property
    def host_ms_per_step(self) -> float:
        """Mean host milliseconds per step."""
        return 1000 * sum(self.host_times) / max(len(self.host_times), 1)

    @property
    def host_ms_median(self) -> float:
        """Median host milliseconds per step (robust to the machine's other work)."""
        ordered = sorted(self.host_times)
        return 1000 * ordered[len(ordered) // 2] if ordered else 0.0


class MurmurDecoder:
    """The `Decoder` of Murmur's own engine."""

    name = "murmur"

    @property
    def base_mode(self) -> DecodeMode:
        """How a new request chooses tokens (a `WorkSource` builds its `Work` with it)."""
        return DecodeMode(repetition_penalty=self.config.repetition_penalty)

    def __init__(
        self,
        model: nn.Module | ModelParts,
        config: EngineConfig | None = None,
        eos_token_ids: Sequence[int] = (),
        segment_boundary: SegmentBoundary | None = None,
        speech_anchor: SpeechAnchor | None = None,
    ) -> None:
        self.parts = model if isinstance(model, ModelParts) else ModelParts.from_model(model)
        config = config or EngineConfig()
        self.config = replace(config, max_batch=config.rows(self.parts.device.type == "cuda"))
        self.fused = FusedModel.from_parts(self.parts.backbone, self.parts.device, self.config.glue)
        self.eos = tuple(int(t) for t in eos_token_ids)
        self.segment_boundary = segment_boundary
        self.speech_anchor = speech_anchor
        self.live: Scheduler | None = None  # the scheduler running now (its counters are live)
        self.stats = RunStats()
        _warn_if_lossy(self.config)

    def decode(
        self, requests: Iterable[DecodeRequest] | WorkSource, cancel: threading.Event | None = None
    ) -> Iterator[DecodeResult]:
        """Results as requests finish. `requests` may also be a `WorkSource` that many jobs feed for
        as long as a server runs (`engine.serve`): the loop then waits for work when idle."""
        queue = requests if isinstance(requests, WorkSource) else WorkQueue(requests, self.base_mode)
        rows, self.stats = self.config.max_batch, RunStats()
        while True:
            scheduler: Scheduler | None = self._scheduler(rows, queue)
            try:
                self.live = scheduler
                yield from scheduler.run(cancel)
                return
            except torch.OutOfMemoryError as exc:
                if rows == 1:
                    raise OutOfMemoryError(
                        "the device ran out of memory decoding even one chunk at a time; "
                        "try shorter chunks, KV eviction, or a device with more memory"
                    ) from exc
                rows = max(1, rows // 2)
            except GrowBatch:
                rows = min(2 * rows, self.config.max_batch)
            except StoreTooSmall:
                pass
            finally:
                self._account(scheduler)
                self.live = None
            queue.push_front(scheduler.in_flight())
            scheduler = None  # the last reference to the failed store: free it before the next one
            _free_memory(self.parts.device)

    def _scheduler(self, rows: int, queue: WorkSource) -> Scheduler:
        grow = True  # a store holding fewer rows than the batch may grow when the rows in flight allow
        return Scheduler(
            self.parts,
            self.fused,
            self.config,
            rows,
            queue,
            self.eos,
            self.segment_boundary,
            self.speech_anchor,
            grow,
        )

    def _account(self, scheduler: Scheduler | None) -> None:
        if scheduler is not None:
            self.stats.batches.append(scheduler.runner.rows)
            self.stats.steps += scheduler.steps
            self.stats.host_times += scheduler.host_times
            self.stats.row_steps += scheduler.row_steps
            self.stats.growths += scheduler.runner.growths
            graphs = scheduler.runner.graphs
            self.stats.capture_seconds += graphs.capture_seconds if graphs is not None else 0.0


def _warn_if_lossy(config: EngineConfig) -> None:
    """Warn (once per setting: Python's warning registry) when the eviction settings are expected to
    evict speech before the transcript has written it."""
    lost = expected_loss(config.eviction)
    if lost > 0.005:
        warnings.warn(
            f"eviction {config.eviction.describe()} is expected to evict about {100 * lost:.0f} % of a 300 s "
            "chunk's speech before the transcript reaches it, so words will be dropped (see `murmur "
            "kv-plan`); `speech-anchor` or `none` evict nothing that is still to be transcribed",
            UserWarning,
            stacklevel=3,
        )


def _free_memory(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
