"""A PulseAudio server without hardware, for playing audio into a microphone that is not there.

`null_sink()` starts `pulseaudio` with one `module-null-sink` in a private runtime folder (its own
XDG_RUNTIME_DIR and HOME, removed afterwards), points this process's environment at it (PortAudio's
ALSA `pulse` device then records the sink's monitor) and yields the environment for `paplay`.
Raises `RuntimeError` saying why when no server can start (not installed, refused).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SINK = "murmur_bench"


@contextmanager
def null_sink() -> Iterator[dict[str, str]]:
    missing = [tool for tool in ("pulseaudio", "paplay", "pactl") if shutil.which(tool) is None]
    if missing:
        raise RuntimeError(f"no PulseAudio server ({', '.join(missing)} missing; Debian: pulseaudio "
                           "pulseaudio-utils)")  # fmt: skip
    runtime = Path(tempfile.mkdtemp(prefix="pa"))  # short: the socket path has a length limit
    runtime.chmod(0o700)
    env = {"XDG_RUNTIME_DIR": str(runtime), "HOME": str(runtime),
           "PULSE_SERVER": f"unix:{runtime}/pulse/native", "PULSE_SOURCE": f"{SINK}.monitor",
           "PULSE_SINK": SINK}  # fmt: skip
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    server = subprocess.Popen(
        ["pulseaudio", "-n", "--daemonize=no", "--system=false", "--exit-idle-time=-1", "--disallow-exit",
         f"--load=module-null-sink sink_name={SINK}", "--load=module-native-protocol-unix"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while subprocess.run(["pactl", "info"], capture_output=True).returncode != 0:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the PulseAudio server did not start")
            time.sleep(0.2)
        yield dict(os.environ)
    finally:
        server.terminate()
        server.wait(timeout=10)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(runtime, ignore_errors=True)
