"""Joining a Ray cluster and starting the workers a `ClusterConfig` asks for.

`connect(config)` reuses a Ray runtime this process already started (tests share one), joins
the cluster at `config.address`, or ("auto") joins the local cluster if one runs and starts one
otherwise. `start_workers(config, backend, options)` sizes the pool from the cluster's resources
(one worker per GPU, or per CPU on a CPU cluster), starts one `ChunkWorker` actor each and
waits for every model to load, so loading errors surface before any file is queued.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from engine.distributed.config import ClusterConfig
from engine.errors import ModelLoadError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, eq=False)
class WorkerHandle:
    actor: Any  # ray.actor.ActorHandle of a ChunkWorker
    name: str


def connect(config: ClusterConfig) -> None:
    import ray

    if ray.is_initialized():
        return
    address = None if config.address == "auto" else config.address
    ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)


def pool_shape(config: ClusterConfig, resources: dict[str, float]) -> tuple[int, float]:
    """(workers, GPUs per worker) for a cluster with `resources` (Ray's resource totals)."""
    gpus = float(resources.get("GPU", 0.0))
    per_gpu = config.gpus_per_worker if config.gpus_per_worker is not None else (1.0 if gpus else 0.0)
    if config.workers is not None:
        need_cpu, need_gpu = config.workers * config.cpus_per_worker, config.workers * per_gpu
        if need_cpu > resources.get("CPU", 0.0) or need_gpu > gpus:
            raise ValueError(
                f"{config.workers} workers need {need_cpu:g} CPU and {need_gpu:g} GPU; "
                f"the cluster has {_describe(resources)}"
            )
        return config.workers, per_gpu
    if per_gpu > 0:
        count = int(gpus // per_gpu)
    else:
        count = int(float(resources.get("CPU", 1.0)) // config.cpus_per_worker)
    if count < 1:
        raise ValueError(f"the cluster ({_describe(resources)}) has no room for a worker")
    return count, per_gpu


def start_workers(config: ClusterConfig, backend: str, options: dict[str, Any]) -> list[WorkerHandle]:
    """Start and warm up the workers (raises `ModelLoadError` when a model cannot load)."""
    import ray

    from engine.distributed.worker import ChunkWorker

    connect(config)
    count, gpus = pool_shape(config, ray.cluster_resources())
    free = ray.available_resources()
    if count * config.cpus_per_worker > free.get("CPU", 0.0) or count * gpus > free.get("GPU", 0.0):
        log.warning("%d workers need more than is free now (%s): some wait", count, _describe(free))
    actor_class = ray.remote(ChunkWorker).options(num_cpus=config.cpus_per_worker, num_gpus=gpus)
    handles = [WorkerHandle(actor_class.remote(backend, options), f"worker {i + 1}") for i in range(count)]
    log.info("started %d workers (%g GPU, %g CPU each)", count, gpus, config.cpus_per_worker)
    try:
        ray.get([h.actor.warm_up.remote() for h in handles])
    except ray.exceptions.RayTaskError as exc:
        stop_workers(handles)
        cause = exc.cause if exc.cause is not None else exc
        raise ModelLoadError(f"a worker could not load the {backend} backend: {cause}") from exc
    except BaseException:
        stop_workers(handles)
        raise
    return handles


def stop_workers(handles: list[WorkerHandle]) -> None:
    import ray

    for handle in handles:
        ray.kill(handle.actor, no_restart=True)


def _describe(resources: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in sorted(resources.items()) if k in ("CPU", "GPU")) or "empty"
