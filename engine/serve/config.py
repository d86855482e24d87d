"""The server's settings: where it listens, its key, and its limits (validated with ValueError).

Binding anything but a loopback address without an API key is refused: a transcription server
on a network takes uploads and GPU time from whoever can reach it.
"""

from __future__ import annotations

import ipaddress
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

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"--port must be between 0 and 65535, got {self.port}")
        if self.max_upload_mb <= 0 or self.max_audio_hours <= 0:
            raise ValueError("--max-upload-mb and --max-audio-hours must be positive")
        if self.heartbeat_seconds <= 0:
            raise ValueError("--heartbeat-seconds must be positive")
        if self.max_queued_jobs < 1:
            raise ValueError("--max-queued-jobs must be at least 1")
        if self.api_key is not None and len(self.api_key) < 8:
            raise ValueError("the API key must be at least 8 characters long")
        if not self.api_key and not is_loopback(self.host):
            raise ValueError(
                f"refusing to listen on {self.host} without an API key: anyone who can reach it could "
                f"use this GPU; give --api-key (or set {KEY_ENV}), or bind 127.0.0.1"
            )

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 2**20)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to anything
