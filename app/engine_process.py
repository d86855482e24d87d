"""The engine in its own process: a `murmur serve` child on loopback that the app speaks to over
HTTP exactly as it speaks to a remote server, so decoding never shares the editor's interpreter.

`EngineProcess.ensure(flags)` starts `python -m engine serve --host 127.0.0.1 --port P FLAGS` (or
keeps the one running with the same flags; other flags restart it) and returns its address and
key once `/health` answers. The key is fresh and random for each start and reaches the child in
its environment ($MURMUR_API_KEY), never on its command line, which `ps` shows to everyone. The
port is a free one; a child that loses it to another program before it binds is started again on
another (`PORT_TRIES`). A child that exits, or is not answering after `startup_seconds`, is an
`EngineError` quoting the end of its error output. The child's temporary files (its log, its
uploads) live in a folder of its own, removed when it is stopped or replaced. `exit_reason()`
says why a child stopped ("killed by signal 9"); `stop()` asks it to end (SIGTERM), then kills
it after `grace` seconds. On Linux the child is also killed when the thread that started it
ends, so a crash of the app leaves no engine behind (PR_SET_PDEATHSIG). That thread is the
`EngineProcess`'s own (`_Parent`), which lives as long as the app, so `ensure` may be called from
any thread: the worker's, a recording's, the watch folder's. The child runs `NICE` steps below the
app's priority, so its decoding never takes the CPU the window needs to draw and take keys.
The child sets both up itself (`engine.parent_bond`): nothing runs between fork and exec, so the
child is started with vfork, which does not hold the window's interpreter while the app's page
tables are copied (a fork did, 15–37 ms for a 0.9–2 GB app, more with its pages cold).
Nothing here imports torch or the engine's models.
"""

from __future__ import annotations

import contextlib
import os
import queue
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from engine.errors import Cancelled, MurmurError
from engine.parent_bond import bond_environment
from engine.serve.config import KEY_ENV

ROOT = Path(__file__).resolve().parents[1]  # the folder that holds the `engine` package
PORT_TRIES = 3
_TAIL = 1500  # characters of the child's error output quoted in a failure
NICE = 10  # the engine's niceness above the app's: the window wins the CPU when both want it
T = TypeVar("T")


class EngineError(MurmurError):
    """The engine process could not be started."""


class EngineStopped(EngineError):
    """The engine process ended while a run was speaking to it."""


class EngineProcess:
    def __init__(self, startup_seconds: float = 180.0, grace: float = 5.0) -> None:
        self.startup_seconds, self.grace = startup_seconds, grace
        self._process: subprocess.Popen[bytes] | None = None
        self._flags: tuple[str, ...] = ()
        self._key = ""
        self._port = 0
        self._folder: Path | None = None  # the child's temporary folder (its log, its uploads)
        self._lock = threading.Lock()
        self._parent = _Parent()  # the thread children are started from (PR_SET_PDEATHSIG)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def key(self) -> str:
        return self._key

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def exit_reason(self) -> str | None:
        """Why the last child stopped ("killed by signal 9", "exited with status 1"); None while it
        runs or when none was started."""
        code = self._process.poll() if self._process is not None else None
        if code is None:
            return None
        if code < 0:
            return f"killed by signal {-code}"
        return f"exited with status {code}"

    def stopped(self, wait: float = 1.0) -> str | None:
        """Why the child stopped, waiting up to `wait` s for a dying one to be gone (its connections
        close a moment before it is); None when it runs on."""
        process = self._process
        if process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(wait)
        return self.exit_reason()

    def ensure(self, flags: Sequence[str], cancel: threading.Event | None = None) -> tuple[str, str]:
        """The address and key of a running engine started with `flags` (started, or restarted when
        the flags changed or it stopped)."""
        with self._lock:
            if not self.running() or tuple(flags) != self._flags:
                self._stop()
                self._start(tuple(flags), cancel)
            return self.url, self._key

    def stop(self) -> None:
        with self._lock:
            self._stop()

    # starting
    def _start(self, flags: tuple[str, ...], cancel: threading.Event | None) -> None:
        for attempt in range(PORT_TRIES):
            self._spawn(flags)
            try:
                self._wait_ready(cancel)
                return
            except EngineError as exc:
                lost_port = "address already in use" in str(exc).lower()
                self._stop()
                if not lost_port or attempt == PORT_TRIES - 1:
                    raise

    def _spawn(self, flags: tuple[str, ...]) -> None:
        self._key, self._port, self._flags = secrets.token_urlsafe(24), _free_port(), flags
        self._folder = Path(tempfile.mkdtemp(prefix="murmur-engine-"))
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, KEY_ENV: self._key, "PYTHONPATH": path, "TMPDIR": str(self._folder),
               **bond_environment(stepped_back())}
        command = [sys.executable, "-m", "engine", "serve", "--host", "127.0.0.1", "--port", str(self._port),
                   *flags]  # fmt: skip
        with open(self._folder / "engine.log", "wb") as log:
            self._process = self._parent.call(lambda: subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, env=env,
                cwd=ROOT))  # fmt: skip

    def _wait_ready(self, cancel: threading.Event | None) -> None:
        deadline = time.monotonic() + self.startup_seconds
        while not self._healthy():
            if cancel is not None and cancel.is_set():
                self._stop()
                raise Cancelled()
            if not self.running():
                raise EngineError(f"The engine could not start: it {self.exit_reason()}.{self._tail()}")
            if time.monotonic() > deadline:
                raise EngineError(f"The engine did not answer within {self.startup_seconds:g} s of starting."
                                  f"{self._tail()}")  # fmt: skip
            time.sleep(0.1)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    def _tail(self) -> str:
        log = self._folder / "engine.log" if self._folder is not None else None
        text = log.read_text("utf-8", "replace") if log is not None and log.exists() else ""
        return f"\n\nIts last words:\n{text[-_TAIL:].strip()}" if text.strip() else ""

    # stopping
    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(self.grace)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._folder is not None:  # its log, and the uploads a killed child left behind
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


class _Parent:
    """A daemon thread that lives as long as the app and runs what it is given: children started
    from it are killed by PR_SET_PDEATHSIG only when the app ends, not when a caller's thread does."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]]] = queue.Queue()
        threading.Thread(target=self._run, daemon=True, name="engine-parent").start()

    def call(self, fn: Callable[[], T]) -> T:
        done: Future[T] = Future()
        self._jobs.put((fn, done))
        return done.result()

    def _run(self) -> None:
        while True:
            fn, done = self._jobs.get()
            try:
                done.set_result(fn())
            except BaseException as exc:  # handed to the caller, who raises it
                done.set_exception(exc)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stepped_back() -> int | None:
    """The niceness `NICE` steps below the app's first thread (the window's), for the engine and
    the app's bursty threads; None where there is no niceness."""
    if not hasattr(os, "getpriority"):
        return None
    return min(os.getpriority(os.PRIO_PROCESS, os.getpid()) + NICE, 19)
