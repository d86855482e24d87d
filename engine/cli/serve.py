"""`murmur serve`: one process per GPU box that loads the model once and serves every client.

The system flags (backend, language, engine, eviction, speakers) are those of `murmur transcribe`,
from the one option table (`engine.options`); the server's own
are where it listens (`--host`, default 127.0.0.1; `--port`), its key (`--api-key` or
$MURMUR_API_KEY; required for any address but loopback) and its limits. The model loads before
anything listens: a model that cannot load is one error line and exit 1. `--ray [ADDRESS]` runs
the same app as a Ray Serve deployment (`engine.serve.ray_app`). See engine/serve/app.py for the API.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

from engine.cli.option_args import add_option_arguments, recipe_of
from engine.errors import MurmurError
from engine.serve.config import KEY_ENV, ServeConfig


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="default: 8000")
    p.add_argument("--api-key", help=f"clients must send it as a Bearer token (better: set ${KEY_ENV}; "
                   "a key on the command line shows in `ps`)")  # fmt: skip
    p.add_argument("--max-upload-mb", type=float, default=2048.0, help="largest upload (default: 2048)")
    p.add_argument("--max-audio-hours", type=float, default=12.0, help="longest recording (default: 12)")
    p.add_argument("--max-queued-jobs", type=int, default=64,
                   help="jobs and arriving uploads taken at once; more get 429 (default: 64)")  # fmt: skip
    p.add_argument("--client-timeout", type=float, default=30.0, metavar="S",
                   help="seconds a client may stay silent while sending a request (default: 30)")  # fmt: skip
    p.add_argument("--max-connections", type=int, default=256,
                   help="connections open at once; more get 503 (default: 256)")  # fmt: skip
    p.add_argument("--metrics-public", action="store_true",
                   help="serve /metrics without the API key (for a Prometheus job; /v1 stays keyed)")
    p.add_argument("--heartbeat-seconds", type=float, default=15.0,
                   help="a waiting answer sends a space (JSON) or a comment line (a stream) this often "
                        "so clients' read timeouts never fire (default: 15)")
    p.add_argument("--ray", nargs="?", const="auto", metavar="auto|ADDRESS",
                   help="run as a Ray Serve deployment, one replica per GPU (see docs/scale.md)")  # fmt: skip
    p.add_argument("--replicas", type=int, help="--ray: replicas (default: one per GPU, else 1)")
    add_option_arguments(p, "serve")


def serve_config(args: argparse.Namespace) -> ServeConfig:
    return ServeConfig(
        host=args.host, port=args.port, api_key=args.api_key or os.environ.get(KEY_ENV) or None,
        max_upload_mb=args.max_upload_mb, max_audio_hours=args.max_audio_hours,
        max_queued_jobs=args.max_queued_jobs, metrics_public=args.metrics_public,
        heartbeat_seconds=args.heartbeat_seconds, client_timeout=args.client_timeout,
        max_connections=args.max_connections,
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    try:
        config = serve_config(args)
        recipe = recipe_of(args, "serve")
        options = recipe.backend_options()
        if args.ray is not None:
            from engine.serve.ray_app import serve_on_ray

            return serve_on_ray(recipe.backend, options, recipe.pipeline, config, args.ray, args.replicas)
        if args.replicas is not None:
            raise ValueError("--replicas only applies with --ray")
        return _serve(recipe.backend, options, recipe.pipeline, config)
    except (MurmurError, ValueError) as exc:
        print(f"murmur: error: {exc}", file=sys.stderr)
        return 1


_GRACE = 5  # seconds requests get to finish once the server is told to stop; then they are cut


def _serve(backend: str, options: dict[str, Any], pipeline: Any, config: ServeConfig) -> int:
    import uvicorn

    from engine.serve.app import create_app
    from engine.serve.connections import protocol
    from engine.serve.server import Server

    server = Server.create(backend, options, pipeline, config)  # the model loads here, or we stop
    # uvicorn re-raises the signals that stopped it once it has shut down (the CLI's own Ctrl-C
    # handler would end the process on the second at once): exit through `finally` instead
    signal.signal(signal.SIGTERM, _exit)
    signal.signal(signal.SIGINT, _exit)
    try:
        where = f"http://{config.host}:{config.port}"
        print(f"murmur serve: {server.model} on {where}", file=sys.stderr, flush=True)
        uvicorn.run(create_app(server), host=config.host, port=config.port, log_level="warning",
                    http=protocol(config), timeout_graceful_shutdown=_GRACE)  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # another Ctrl-C must not cut the clean-up short
        server.close()  # cancels running jobs, removes the upload folder
        signal.signal(signal.SIGINT, _abort)  # the uploads are gone: now one ends the process at once
    return 0



def _exit(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _abort(signum: int, frame: Any) -> None:
    os._exit(130)
