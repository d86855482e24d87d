"""Ctrl-C for the command line: the first asks the running command to stop, a second exits at once.

`install(cancel)` makes SIGINT set `cancel` (a `threading.Event` the pipeline checks between units
of work) and say so on stderr; a second SIGINT writes one line and ends the process with status
130 straight away, without a traceback (an atomic write it cut short leaves only a hidden `.part`
file, removed by the next write to that folder). `main` installs it before the heavy imports, so
an early Ctrl-C is handled the same way. Returns the handler it replaced.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

Handler = Callable[[int, Any], None]


def on_interrupt(cancel: threading.Event) -> Handler:
    """A SIGINT handler: set `cancel` on the first signal, exit 130 on the second."""

    def handler(signum: int, frame: Any) -> None:
        if cancel.is_set():
            _say("\nmurmur: aborted")
            os._exit(130)
        cancel.set()
        _say("\nmurmur: stopping after the current step (Ctrl-C again to abort)")

    return handler


def install(cancel: threading.Event) -> Any:
    """Route SIGINT to `on_interrupt(cancel)`; returns the previous handler."""
    return signal.signal(signal.SIGINT, on_interrupt(cancel))


def _say(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # stderr gone: exiting quietly is still right
        print(line, file=sys.stderr, flush=True)
