"""Settings of a Ray run: which cluster, how many workers, what each one holds, how hard to retry.

`ClusterConfig` is a frozen dataclass validated on construction (`ValueError`). `address`
"auto" joins the cluster this machine already belongs to (`RAY_ADDRESS`, or one started with
`ray start`), else starts a local one; any other value is a Ray address (`HOST:6379`,
`ray://HOST:10001`). `workers` None means one per GPU on a cluster with GPUs, else one per CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.distributed.queue import ORDERS


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    address: str = "auto"
    workers: int | None = None  # None: as many as the cluster's GPUs (or CPUs) allow
    gpus_per_worker: float | None = None  # None: 1 on a cluster with GPUs, else 0
    cpus_per_worker: float = 1.0
    max_retries: int = 2  # a chunk is tried at most 1 + max_retries times
    calls_in_flight: int = 2  # batches queued per worker, so it never waits for the driver
    order: str = "longest"  # the queue's order: longest first, or fifo

    def __post_init__(self) -> None:
        if not self.address.strip():
            raise ValueError("the Ray address must be 'auto' or HOST:PORT, got an empty string")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")
        if self.gpus_per_worker is not None and not 0 <= self.gpus_per_worker <= 64:
            raise ValueError(f"GPUs per worker must be within 0–64, got {self.gpus_per_worker}")
        if not 0 < self.cpus_per_worker <= 1024:
            raise ValueError(f"CPUs per worker must be positive, got {self.cpus_per_worker}")
        if not 0 <= self.max_retries <= 10:
            raise ValueError(f"retries must be within 0–10, got {self.max_retries}")
        if self.calls_in_flight < 1:
            raise ValueError(f"calls in flight must be at least 1, got {self.calls_in_flight}")
        if self.order not in ORDERS:
            raise ValueError(f"queue order must be one of {', '.join(ORDERS)}, got {self.order!r}")
