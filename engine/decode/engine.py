"""Murmur's decoder: batched greedy decoding with KV eviction, row refill and loop recovery.

`MurmurDecoder.decode` takes any number of `DecodeRequest`s (read lazily) and yields a
`DecodeResult` for each as soon as it finishes. It runs a `Scheduler` over at most
`config.max_batch` rows; when the device runs out of memory it gives the unfinished requests back
to the queue and continues with half the batch, and reports `OutOfMemoryError` only when a single
row does not fit. Results already yielded are never recomputed.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterable, Iterator, Sequence

import torch
from torch import nn

from engine.decode.api import DecodeRequest, DecodeResult, SegmentBoundary, SpeechAnchor
from engine.decode.config import EngineConfig
from engine.decode.sampling import DecodeMode
from engine.decode.scheduler import Scheduler
from engine.decode.step import ModelParts
from engine.decode.work import WorkQueue
from engine.errors import OutOfMemoryError


class MurmurDecoder:
    """The `Decoder` of Murmur's own engine."""

    name = "murmur"

    def __init__(
        self,
        model: nn.Module | ModelParts,
        config: EngineConfig | None = None,
        eos_token_ids: Sequence[int] = (),
        segment_boundary: SegmentBoundary | None = None,
        speech_anchor: SpeechAnchor | None = None,
    ) -> None:
        self.parts = model if isinstance(model, ModelParts) else ModelParts.from_model(model)
        self.config = config or EngineConfig()
        self.eos = tuple(int(t) for t in eos_token_ids)
        self.segment_boundary = segment_boundary
        self.speech_anchor = speech_anchor

    def decode(
        self, requests: Iterable[DecodeRequest], cancel: threading.Event | None = None
    ) -> Iterator[DecodeResult]:
        queue = WorkQueue(requests, DecodeMode(repetition_penalty=self.config.repetition_penalty))
        rows = self.config.max_batch
        while True:
            scheduler = Scheduler(
                self.parts, self.config, rows, queue, self.eos, self.segment_boundary, self.speech_anchor
            )
            try:
                yield from scheduler.run(cancel)
                return
            except torch.OutOfMemoryError as exc:
                queue.push_front(scheduler.in_flight())
                del scheduler
                _free_memory(self.parts.device)
                if rows == 1:
                    raise OutOfMemoryError(
                        "the device ran out of memory decoding even one chunk at a time; "
                        "try shorter chunks, KV eviction, or a device with more memory"
                    ) from exc
                rows = max(1, rows // 2)


def _free_memory(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
