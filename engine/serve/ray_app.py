"""`murmur serve --ray [auto|ADDRESS]`: the same app as a Ray Serve deployment, one replica per GPU.

Each replica builds its own `Server` (the model loaded once per replica, its own shared batch)
and the same FastAPI app (`engine.serve.app.create_app`), through Ray Serve's ASGI ingress with a
builder evaluated in the replica; Ray Serve's proxy puts every replica behind one HTTP endpoint
on `--host`/`--port` and spreads requests over them. Replicas default to one per GPU of the
cluster (1 GPU each), or one on a cluster without GPUs; `--replicas N` overrides it (CPU
replicas then take 1 CPU each). The key, limits and errors are the app's own, per replica.
"""

from __future__ import annotations

import signal
import sys
from typing import Any

from engine.distributed import ClusterConfig
from engine.distributed.cluster import connect
from engine.pipeline import PipelineConfig
from engine.serve.config import ServeConfig


def replica_shape(resources: dict[str, float], replicas: int | None) -> tuple[int, float]:
    """(replicas, GPUs per replica) for a cluster with `resources`."""
    gpus = int(resources.get("GPU", 0))
    if replicas is not None and replicas < 1:
        raise ValueError("--replicas must be at least 1")
    count = replicas or max(gpus, 1)
    return count, min(1.0, gpus / count)


def serve_on_ray(
    backend: str,
    options: dict[str, Any],
    pipeline: PipelineConfig,
    config: ServeConfig,
    address: str,
    replicas: int | None,
) -> int:
    import ray
    from ray import serve

    connect(ClusterConfig(address=address))
    count, gpus = replica_shape(ray.cluster_resources(), replicas)

    def build() -> Any:  # runs in each replica
        from engine.serve.app import create_app
        from engine.serve.server import Server

        return create_app(Server.create(backend, options, pipeline, config))

    actor = {"num_gpus": gpus} if gpus else {"num_cpus": 1}
    deployment = serve.deployment(
        serve.ingress(build)(), name="murmur", num_replicas=count, ray_actor_options=actor,
        max_ongoing_requests=config.max_queued_jobs,
    )  # fmt: skip
    serve.start(http_options={"host": config.host, "port": config.port})
    where = f"http://{config.host}:{config.port}"
    print(f"murmur serve: {count} Ray Serve replica(s), {gpus:g} GPU each, on {where}",
          file=sys.stderr, flush=True)  # fmt: skip
    previous = signal.signal(signal.SIGTERM, _exit)  # a terminated server takes its replicas down
    try:
        serve.run(deployment.bind(), name="murmur", route_prefix="/", blocking=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
        serve.shutdown()
        ray.shutdown()
    return 0


def _exit(signum: int, frame: Any) -> None:
    raise SystemExit(0)
