"""A PulseAudio server without hardware for tests that play or record through real PortAudio.

`running_sink(name)` starts `pulseaudio` with a null sink in a private runtime folder (removed
afterwards) and yields the environment a subprocess needs to reach it: ALSA's `pulse` plugin as
the default device (an `.asoundrc` in a private HOME), the sink's monitor as the default source.
Unlike ALSA's null device, a null sink consumes audio in real time, as a sound card does. Raises
`SinkUnavailable` (with the reason) where no server can start.
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

ASOUNDRC = "pcm.!default { type pulse }\nctl.!default { type pulse }\n"


class SinkUnavailable(RuntimeError):
    """No PulseAudio server could be started here."""


@contextmanager
def running_sink(name: str = "murmur_test") -> Iterator[dict[str, str]]:
    missing = [tool for tool in ("pulseaudio", "pactl") if shutil.which(tool) is None]
    if missing:
        raise SinkUnavailable(f"no PulseAudio server installed ({', '.join(missing)} missing)")
    runtime = Path(tempfile.mkdtemp(prefix="pa"))  # short: the socket path has a length limit
    runtime.chmod(0o700)
    (runtime / ".asoundrc").write_text(ASOUNDRC)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "HOME": str(runtime),
           "PULSE_SERVER": f"unix:{runtime}/pulse/native", "PULSE_SOURCE": f"{name}.monitor",
           "PULSE_SINK": name}  # fmt: skip
    server = subprocess.Popen(
        ["pulseaudio", "-n", "--daemonize=no", "--system=false", "--exit-idle-time=-1", "--disallow-exit",
         f"--load=module-null-sink sink_name={name}", "--load=module-native-protocol-unix"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while subprocess.run(["pactl", "info"], env=env, capture_output=True).returncode != 0:
            if server.poll() is not None or time.monotonic() > deadline:
                why = server.stderr.read() if server.poll() is not None and server.stderr else "timed out"
                raise SinkUnavailable(f"the PulseAudio server did not start: {why.strip()[-300:]}")
            time.sleep(0.2)
        yield env
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(runtime, ignore_errors=True)
