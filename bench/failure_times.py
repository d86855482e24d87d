"""How long the fast failures take: the times the tests used to bound, measured and printed instead.

Each case is run as the user meets it and timed with a wall clock; nothing is asserted (a loaded
machine is slower, not wrong). The tests check what happens (the message, one line, the cut-off);
this prints how long it took:
- `--backend vibevoice` with no checkpoint and an unreachable hub (the CLI in a fresh process:
  imports, then one failed hub request; hub retries took 32 s);
- a VibeVoice server that replies without end (cut off at the reply cap tied to the token budget);
- a server that drips a byte every 0.1 s (cut off at the one request deadline, 1 s).

    .venv/bin/python bench/failure_times.py
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unreachable_hub() -> float:
    with tempfile.TemporaryDirectory(prefix="murmur-bench-") as folder:
        audio = Path(folder) / "talk.wav"
        sf.write(audio, np.zeros(16000, dtype=np.float32), 16000)
        env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
        env |= {"PYTHONPATH": str(ROOT), "HF_HOME": str(Path(folder) / "hf"),
                "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}"}  # fmt: skip
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "engine", "transcribe", str(audio), "--backend", "vibevoice",
                        "-q"], env=env, capture_output=True, timeout=600)  # fmt: skip
        return time.monotonic() - started


def hostile(behaviour_name: str, **options: object) -> float:
    sys.path.insert(0, str(ROOT / "tests" / "engine" / "vibevoice"))
    import test_server_hostile as hostile_server

    from engine.errors import ServerError

    started = time.monotonic()
    with contextlib.suppress(ServerError):
        hostile_server.ask(getattr(hostile_server, behaviour_name), **options)
    return time.monotonic() - started


def main() -> None:
    print(f"load: {os.getloadavg()[0]:.1f} (1 min)")
    print(f"vibevoice, no checkpoint, hub unreachable: {unreachable_hub():.1f} s to the one-line error")
    print(f"server replying without end: {hostile('endless'):.1f} s to the cut-off")
    print(f"server dripping bytes, 1 s deadline: {hostile('drip', server_timeout=1.0):.1f} s to the cut-off")


if __name__ == "__main__":
    main()
