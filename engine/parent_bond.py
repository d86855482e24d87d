"""A child process bound to the process that started it, set up by the child itself.

Contract of `bind_to_parent()`, the first thing `python -m engine` runs, before any import that
could start a thread:
- With `PARENT_ENV` in the environment (the starter's process id), on Linux the process is killed
  (SIGKILL) as soon as the thread that started it ends (PR_SET_PDEATHSIG), and exits at once
  (status `ORPHANED`) when the starter is already gone, which the kernel would not signal.
- With `NICE_ENV` (a niceness, absolute) the process runs at that niceness: every thread it starts
  later inherits it.
- Both variables are removed from the environment, so the process's own children are not bound.

`bond_environment(nice)` is what a starter adds to the child's environment. It replaces code run
between fork and exec (`preexec_fn`), which makes Python fork instead of vfork: a fork copies the
starter's page tables while the starter's interpreter is held, some 15 ms per GB of its memory and
more with its pages gone cold, where vfork and exec hold it for about 1 ms.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PARENT_ENV = "MURMUR_BOUND_TO"
NICE_ENV = "MURMUR_NICE"
ORPHANED = 70
_PR_SET_PDEATHSIG = 1


def bond_environment(nice: int | None) -> dict[str, str]:
    """The variables that bind a child started by this process (`nice`: its niceness, or None to
    leave the niceness as inherited)."""
    bond = {PARENT_ENV: str(os.getpid())}
    if nice is not None:
        bond[NICE_ENV] = str(nice)
    return bond


def bind_to_parent() -> None:
    """Apply (and remove) the bond the starter put in the environment; nothing without one."""
    parent, nice = os.environ.pop(PARENT_ENV, None), os.environ.pop(NICE_ENV, None)
    if nice is not None and hasattr(os, "setpriority"):
        with contextlib.suppress(OSError, ValueError):
            os.setpriority(os.PRIO_PROCESS, 0, int(nice))
    if parent is None or not sys.platform.startswith("linux"):
        return
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if str(os.getppid()) != parent:  # the starter ended before the bond was made
        os._exit(ORPHANED)
