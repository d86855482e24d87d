"""`GET /metrics`: the server's counters in Prometheus' text format (version 0.0.4)."""

from __future__ import annotations

import time
from typing import Any


def render_metrics(server: Any) -> str:
    registry = server.registry
    rows: list[tuple[str, str, str, float]] = [
        ("murmur_model_loaded", "gauge", "1 when the model is loaded and jobs taken", float(server.ready)),
        ("murmur_jobs_active", "gauge", "jobs queued or running", registry.active),
        ("murmur_jobs_max", "gauge", "most jobs taken at once (more get 429)", registry.max_jobs),
        ("murmur_uploads_arriving", "gauge", "uploads being received or measured", server.places.uploads),
        ("murmur_audio_seconds_total", "counter", "audio seconds of finished jobs", registry.audio_seconds),
        ("murmur_realtime_sessions", "gauge", "live-audio WebSocket sessions open",
         getattr(server, "realtime_sessions", 0)),
    ]
    lines: list[str] = []
    for name, kind, text, value in rows:
        lines += _metric(name, kind, text, value)
    lines += ["# HELP murmur_jobs_total jobs that ended, by how", "# TYPE murmur_jobs_total counter"]
    lines += [f'murmur_jobs_total{{state="{s}"}} {n}' for s, n in sorted(registry.counts.items())]
    if hasattr(server.shared, "metrics"):  # whisper's shared calls describe their own counters
        for name, kind, text, value in server.shared.metrics():
            lines += _metric(name, kind, text, value)
    elif server.shared is not None:
        lines += _decode_metrics(server.shared, time.monotonic() - server.started)
    return "\n".join(lines) + "\n"


def _decode_metrics(shared: Any, uptime: float) -> list[str]:
    steps, row_steps, rows_now = shared.counters()
    source = shared.source
    kept = sum(shared.kept) / len(shared.kept) if shared.kept else 1.0
    rows: list[tuple[str, str, str, float]] = [
        ("murmur_decode_steps_total", "counter", "decode steps of the shared batch", steps),
        ("murmur_decode_row_steps_total", "counter", "rows decoded, summed over steps", row_steps),
        ("murmur_rows_per_step", "gauge", "mean rows per decode step", row_steps / steps if steps else 0.0),
        ("murmur_rows_active", "gauge", "rows of the batch occupied now", rows_now),
        ("murmur_queue_jobs", "gauge", "jobs with chunks in the shared queue or in rows", source.jobs),
        ("murmur_rows_freed_cancelled_total", "counter", "rows freed because their job was cancelled",
         source.rows_freed),
        ("murmur_chunks_dropped_cancelled_total", "counter", "queued chunks dropped by a cancel",
         source.chunks_dropped),
        ("murmur_tokens_generated_total", "counter", "tokens generated, all jobs", shared.tokens),
        ("murmur_tokens_per_second", "gauge", "tokens per second since start", shared.tokens / uptime),
        ("murmur_kv_kept_fraction", "gauge", "kept/logical KV at the end of recent chunks", kept),
        ("murmur_decode_restarts_total", "counter", "times the shared decode loop failed", shared.failures),
    ]  # fmt: skip
    lines: list[str] = []
    for name, kind, text, value in rows:
        lines += _metric(name, kind, text, value)
    return lines


def _metric(name: str, kind: str, text: str, value: float) -> list[str]:
    return [f"# HELP {name} {text}", f"# TYPE {name} {kind}", f"{name} {_number(value)}"]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6g}"
