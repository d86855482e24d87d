"""A child bound to its starter through its environment: its niceness, its death with the thread
that started it, an already-gone starter, and children of its own left unbound (real processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine.parent_bond import NICE_ENV, ORPHANED, PARENT_ENV, bond_environment

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import os, subprocess, sys, time
from engine.parent_bond import bind_to_parent
bind_to_parent()
asks = "import os; print(sorted(k for k in os.environ if k in ('MURMUR_BOUND_TO', 'MURMUR_NICE')))"
inherited = subprocess.run([sys.executable, "-c", asks], capture_output=True, text=True).stdout.strip()
print(os.getpriority(os.PRIO_PROCESS, 0), inherited, flush=True)
time.sleep(60)
"""
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")


def start_from_a_thread(env: dict[str, str]) -> tuple[subprocess.Popen[str], list[str]]:
    """The child and its first line, started from a thread that waited for that line (the child has
    bound itself by then, as the app's starting thread outlives it) and has ended when this returns."""
    started: list[subprocess.Popen[str]] = []
    first: list[str] = []
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}

    def start() -> None:
        started.append(subprocess.Popen([sys.executable, "-c", CHILD], env=full, cwd=ROOT,
                                        stdout=subprocess.PIPE, text=True))  # fmt: skip
        first.extend(started[0].stdout.readline().split(maxsplit=1))  # type: ignore[union-attr]

    starter = threading.Thread(target=start)
    starter.start()
    starter.join()
    return started[0], first


def ended(child: subprocess.Popen[str], within: float = 20.0) -> int | None:
    try:
        return child.wait(within)
    except subprocess.TimeoutExpired:
        return None


def nicer() -> int:
    return min(os.getpriority(os.PRIO_PROCESS, 0) + 7, 19)


@linux
def test_a_bound_child_takes_its_niceness_and_dies_when_the_thread_that_started_it_ends() -> None:
    # catches: the niceness or the death signal not set up (an engine left running after a crashed
    # app, decoding at the window's priority), or the bond passed on to the child's own children
    child, line = start_from_a_thread(bond_environment(nicer()))
    try:
        assert int(line[0]) == nicer()
        assert line[1].strip() == "[]"  # neither variable reached the child's own child
        assert ended(child) == -9  # killed: the thread that started it has ended
    finally:
        child.kill()
        child.wait()


@linux
def test_a_child_whose_starter_is_already_gone_exits_at_once() -> None:
    # catches: the check of the parent after the bond dropped (a starter that died while the child
    # started would leave it running for ever: the kernel signals only deaths after the bond)
    env = {**os.environ, "PYTHONPATH": str(ROOT), PARENT_ENV: "1"}  # not its parent: init is
    child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                             text=True)  # fmt: skip
    try:
        assert ended(child) == ORPHANED
        assert child.stdout.read() == ""  # type: ignore[union-attr]
    finally:
        child.kill()
        child.wait()


def test_an_unbound_child_keeps_the_starters_niceness_and_outlives_its_thread() -> None:
    # catches: a bond made without the variables (every `python -m engine` a user runs by hand would
    # die with the thread of whatever started it)
    child, line = start_from_a_thread({})
    try:
        assert int(line[0]) == os.getpriority(os.PRIO_PROCESS, 0)
        time.sleep(0.5)
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()


def test_the_bond_names_this_process_and_the_niceness_only_when_given() -> None:
    assert bond_environment(None) == {PARENT_ENV: str(os.getpid())}
    assert bond_environment(12) == {PARENT_ENV: str(os.getpid()), NICE_ENV: "12"}
