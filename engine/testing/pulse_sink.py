"""A PulseAudio server without hardware, for tests and benchmarks that play or record through real
PortAudio as a user's sound card would.

`running_sink(name)` starts `pulseaudio` with one `module-null-sink` in a private runtime folder (its
own XDG_RUNTIME_DIR and HOME, removed afterwards) and yields a `Sink`: the environment a process needs
to reach it (ALSA's `pulse` plugin as the default device through an `.asoundrc` in that HOME, the
sink's monitor as the default source, the sink for `paplay`) and the server process (a test may kill
it, as an unplugged device). Unlike ALSA's null device, a null sink consumes audio in real time.
`pointed_here(env)` points this process at it until the block ends (PortAudio reads its devices once
per process: set it before the first `import sounddevice`); `devices_here(env)` does the same and
makes PortAudio read its devices again on entry and on exit, so a process that has already listed
them sees the sink's (and afterwards its own again). Raises `SinkUnavailable` with the reason
where no server can start.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SINK = "murmur_test"
ASOUNDRC = "pcm.!default { type pulse }\nctl.!default { type pulse }\n"


class SinkUnavailable(RuntimeError):
    """No PulseAudio server could be started here."""


@dataclass(frozen=True)
class Sink:
    env: dict[str, str]
    server: subprocess.Popen[str]


@contextmanager
def running_sink(name: str = SINK) -> Iterator[Sink]:
    missing = [tool for tool in ("pulseaudio", "paplay", "pactl") if shutil.which(tool) is None]
    if missing:
        raise SinkUnavailable(f"no PulseAudio server installed ({', '.join(missing)} missing; Debian: "
                              "pulseaudio pulseaudio-utils)")  # fmt: skip
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
        yield Sink(env, server)
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(runtime, ignore_errors=True)


@contextmanager
def pointed_here(env: dict[str, str]) -> Iterator[None]:
    """This process's environment set to `env` for the block, then put back."""
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def devices_here(env: dict[str, str]) -> Iterator[None]:
    """`pointed_here(env)` with PortAudio's device list read again on entry and on exit (no stream
    may be open across either)."""
    import sounddevice as sd

    with pointed_here(env):
        sd._terminate()  # sounddevice's own way to make PortAudio list the devices again
        sd._initialize()
        try:
            yield
        finally:
            sd._terminate()
    sd._initialize()
