"""The Ray flags shared by `murmur transcribe`, `eval` and `bench`, and the config they make.

`--ray [auto|ADDRESS]` turns a run into a cluster run (see docs/scale.md); `--workers`,
`--gpus-per-worker` and `--retries` shape it and are refused without `--ray`, so a flag is never
silently ignored. `ray_backend(args, backend, options)` is the `RayBackend` eval and bench use.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

RAY_ONLY = (("workers", "--workers"), ("gpus_per_worker", "--gpus-per-worker"), ("retries", "--retries"))


def add_cluster_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("cluster (Ray; see docs/scale.md)")
    g.add_argument(
        "--ray", nargs="?", const="auto", metavar="auto|ADDRESS",
        help="spread the chunks over a Ray cluster: auto (the default value) joins the cluster this "
        "machine belongs to or starts a local one; or HOST:6379 / ray://HOST:10001",
    )  # fmt: skip
    g.add_argument("--workers", type=int, metavar="N", help="Ray workers (default: one per GPU or CPU)")
    g.add_argument("--gpus-per-worker", type=float, metavar="G", help="default: 1 if the cluster has GPUs")
    g.add_argument("--retries", type=int, metavar="R", help="tries after a failure, per chunk (default 2)")


def cluster_config(args: argparse.Namespace) -> Any:
    """The `ClusterConfig` the flags describe, or None without `--ray`."""
    from engine.distributed import ClusterConfig

    if getattr(args, "ray", None) is None:
        given = [flag for name, flag in RAY_ONLY if getattr(args, name, None) is not None]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise ValueError(f"{', '.join(given)} only {verb} with --ray")
        return None
    if Path(args.ray).exists():  # `--ray a.wav b.wav`: argparse took a file for the address
        raise ValueError(f"--ray took {args.ray!r} for a cluster address; write --ray auto or put it last")
    retries = {"max_retries": args.retries} if args.retries is not None else {}
    return ClusterConfig(
        address=args.ray, workers=args.workers, gpus_per_worker=args.gpus_per_worker, **retries
    )


def ray_backend(args: argparse.Namespace, backend: str, options: dict[str, Any]) -> Any:
    """A `RayBackend` for `backend` when `--ray` was given, else None."""
    cluster = cluster_config(args)
    if cluster is None:
        return None
    from engine.distributed.backend import RayBackend

    return RayBackend(backend, options, cluster)
