"""A real `murmur serve` subprocess on a free loopback port, and what tests send it.

`start_server(*flags)` starts one and waits until /health answers (or fails with its stderr);
`stop` ends it, keeps what it printed (`Served.log`) and what it left in its private TMPDIR
(`Served.left`), and removes that TMPDIR. Modules reuse one server each through module-scoped
fixtures.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

ROOT = Path(__file__).resolve().parents[3]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
KEY = "test-key-0123456789"


@dataclass
class Served:
    url: str
    process: subprocess.Popen
    tmp: Path  # the server's TMPDIR: its upload folder lives there
    log: str = ""  # its stderr, once stopped
    left: tuple[str, ...] = ()  # upload folders left in its TMPDIR when it stopped

    def printed(self) -> str:
        """What the server has written to stderr so far."""
        path = self.tmp / "stderr.txt"
        return path.read_text(errors="replace") if path.exists() else self.log

    def get(self, path: str, key: str | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(self.url + path)
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def metrics(self, key: str | None = None) -> dict[str, float]:
        status, body = self.get("/metrics", key)
        assert status == 200, body
        values = {}
        for line in body.decode().splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                values[name] = float(value)
        return values


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(*flags: str, wait: float = 240.0, env: dict[str, str] | None = None) -> Served:
    port = free_port()
    tmp = Path(tempfile.mkdtemp(prefix="served-"))
    command = [sys.executable, "-m", "engine", "serve", "--port", str(port), *flags]
    with (tmp / "stderr.txt").open("w") as stderr:  # a file: a pipe nobody reads could fill and block it
        process = subprocess.Popen(command, cwd=ROOT, env={**ENV, **(env or {}), "TMPDIR": str(tmp)},
                                   stdout=subprocess.DEVNULL, stderr=stderr, text=True)  # fmt: skip
    served = Served(f"http://127.0.0.1:{port}", process, tmp)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            stop(served)
            raise AssertionError(f"murmur serve exited {process.returncode}: {served.log}")
        with contextlib.suppress(OSError):
            status, body = served.get("/health")
            if status == 200 and json.loads(body)["model_loaded"]:
                return served
        time.sleep(0.2)
    stop(served)
    raise AssertionError("murmur serve did not come up in time")


def stop(served: Served, signals: tuple[int, ...] = (signal.SIGTERM,)) -> None:
    """Send `signals` (a tenth of a second apart), wait for the end, keep its log, remove its TMPDIR."""
    if not served.tmp.exists():
        return  # stopped already
    for sig in signals:
        if served.process.poll() is None:
            served.process.send_signal(sig)
            time.sleep(0.1)
    try:
        served.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        served.process.kill()
        served.process.wait()
    served.log = served.printed()
    served.left = tuple(sorted(p.name for p in served.tmp.glob("murmur-serve-*")))
    shutil.rmtree(served.tmp, ignore_errors=True)


@contextlib.contextmanager
def server(*flags: str, wait: float = 240.0, env: dict[str, str] | None = None) -> Iterator[Served]:
    served = start_server(*flags, wait=wait, env=env)
    try:
        yield served
    finally:
        stop(served)


def write_flac(path: Path, samples: np.ndarray, rate: int = 16000) -> Path:
    sf.write(path, samples, rate, format="FLAC", subtype="PCM_16")
    return path


@pytest.fixture(scope="session")
def demo_pieces(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Eight different 12-second pieces of the bundled demo meeting, 16 kHz mono FLAC."""
    from engine.audio.io import load_audio

    recording = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000)
    folder = tmp_path_factory.mktemp("pieces")
    rate = 16000
    pieces = [recording.samples[i * 15 * rate : (i * 15 + 12) * rate] for i in range(8)]
    return [write_flac(folder / f"piece{i}.flac", samples) for i, samples in enumerate(pieces)]
