"""The server's settings: where it listens, its key, and its limits (validated with ValueError).

Binding anything but a loopback address without an API key is refused: a transcription server
on a network takes uploads and GPU time from whoever can reach it. Every limit is a finite
positive number: `nan` or `inf` would switch a limit off without saying so.

What each limit bounds:
    max_upload_mb     bytes of one upload (counted as they arrive)
    max_audio_hours   length of one recording, measured by decoding it (never the header's word),
                      so one job holds at most this much audio (≈ 230 MB an hour at 16 kHz)
    max_queued_jobs   jobs running plus uploads still arriving: a request takes its place before
                      its body is read, and more get 429
    client_timeout    seconds a client may stay silent while sending a request (its headers, or
                      the next piece of its upload) before the connection is closed
    max_connections   connections open at once; more are answered 503 and closed
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

KEY_ENV = "MURMUR_API_KEY"


@dataclass(frozen=True, slots=True)
class ServeConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    api_key: str | None = None
    max_upload_mb: float = 2048.0
    max_audio_hours: float = 12.0
    max_queued_jobs: int = 64
    metrics_public: bool = False  # /metrics without the key (a Prometheus job); /v1 stays keyed
    heartbeat_seconds: float = 15.0  # a waiting answer sends a space (JSON) or a comment (SSE) this often
    client_timeout: float = 30.0
    max_connections: int = 256

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"--port must be between 0 and 65535, got {self.port}")
        limits = {"--max-upload-mb": self.max_upload_mb, "--max-audio-hours": self.max_audio_hours,
                  "--client-timeout": self.client_timeout,
                  "--heartbeat-seconds": self.heartbeat_seconds}  # fmt: skip
        for flag, value in limits.items():
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{flag} must be a positive number, got {value:g}")
        if self.max_queued_jobs < 1:
            raise ValueError("--max-queued-jobs must be at least 1")
        if self.max_connections < 1:
            raise ValueError("--max-connections must be at least 1")
        if self.api_key is not None and len(self.api_key) < 8:
            raise ValueError("the API key must be at least 8 characters long")
        if not self.api_key and not is_loopback(self.host):
            raise ValueError(
                f"refusing to listen on {self.host} without an API key: anyone who can reach it could "
                f"use this GPU; set {KEY_ENV} (or give --api-key), or bind 127.0.0.1"
            )

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 2**20)

    @property
    def max_audio_seconds(self) -> float:
        return self.max_audio_hours * 3600.0


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to anything
