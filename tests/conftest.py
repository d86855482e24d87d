"""Settings every test process shares, set before any numeric library loads.

One OpenMP thread: CTranslate2 and torch round differently with different thread counts, and Ray
gives each worker one thread per CPU it holds, so the equivalence tests (local run against the
cluster's) compare like with like on a machine of any size.

Without an NVIDIA device, Triton kernels (the split-KV decode attention) run under Triton's
interpreter on CPU tensors; Triton decides that when `triton.language` is first imported (which
importing transformers' Qwen2 already does), so it is set here.

The session runs in a sandbox (`sandbox.Sandbox`): its own home and temp folder, removed at the
end. What the tests left in the real home or temp folder, or in the session's temp folder outside
a test's `tmp_path`, is listed at the end; with `MURMUR_LEAK_CHECK=fail` (as `make test` sets it)
the session then fails. (Report only by default: another program may write there meanwhile.)
"""

import os

import pytest
from sandbox import Sandbox

SANDBOX = pytest.StashKey[Sandbox]()
LEFT = pytest.StashKey[list[str]]()

os.environ["OMP_NUM_THREADS"] = "1"
if not os.path.exists("/dev/nvidiactl"):
    os.environ.setdefault("TRITON_INTERPRET", "1")


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controlling process makes one sandbox
        config.stash[SANDBOX] = Sandbox.start()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    sandbox = session.config.stash.get(SANDBOX, None)
    if sandbox is None:
        return
    left = sandbox.left_behind()
    session.config.stash[LEFT] = left
    if left and os.environ.get("MURMUR_LEAK_CHECK") == "fail":
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    left = config.stash.get(LEFT, [])
    if left:
        terminalreporter.section("left behind by the tests")
        for path in left:
            terminalreporter.write_line(path)


def pytest_unconfigure(config: pytest.Config) -> None:
    sandbox = config.stash.get(SANDBOX, None)
    if sandbox is not None:
        sandbox.close()


@pytest.fixture
def portaudio_sink():
    """A PulseAudio null sink with this process's PortAudio made to see it (its `pulse` and `default`
    devices), for tests that play or record in process; skipped where no sink can run."""
    import contextlib

    from engine.testing.pulse_sink import SinkUnavailable, devices_here, running_sink

    with contextlib.ExitStack() as stack:
        try:
            sink = stack.enter_context(running_sink())
        except SinkUnavailable as exc:
            pytest.skip(str(exc))
        stack.enter_context(devices_here(sink.env))
        yield sink
