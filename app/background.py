"""Threads of the window's process other than the window's own, and how they leave it the CPU and
the interpreter.

- `step_back()` puts the calling thread `NICE` steps below the window, as the engine process is
  (Linux gives each thread its own niceness; elsewhere nothing changes). Threads that work in bursts
  while the user edits call it first: the engine's worker (decoding and planning a file), the
  loaders of a spelling dictionary and of known voices, the project's writer, the watch folder's
  handler, a recording's closer. On two cores such a burst used to take the core the window wanted,
  and the window waited for it. Threads that keep time do not: the audio device's callback, the
  recording's writer, the live stream's reader (its lines are the live lag).
- `preload_runtime()` imports the voice detector's runtime (onnxruntime) on the window's thread
  before the window shows: its extension's initialisation is one C call that holds the interpreter
  for 60–90 ms, which the worker's first file opened used to take from the window while the user
  worked.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

from app.engine_process import stepped_back


def step_back() -> int:
    """The calling thread at `NICE` above the window's niceness; returns the thread's id."""
    me = threading.get_native_id()
    if sys.platform.startswith("linux") and (nice := stepped_back()) is not None:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, me, nice)
    return me


def preload_runtime() -> None:
    """Import onnxruntime now; a missing one is said when it is used."""
    with contextlib.suppress(ImportError):
        import onnxruntime  # noqa: F401
