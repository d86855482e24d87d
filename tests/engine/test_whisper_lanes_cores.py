"""An `OMP_NUM_THREADS` above the cores this process may use does not give whisper more lanes
than cores: the loaded model runs no more calls side by side than there are cores to run them;
and the lanes themselves run exactly as many calls at once as there are lanes, one more queued."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from engine.backends.whisper import WhisperConfig, load_model
from engine.backends.whisper_decode import replicas
from engine.backends.whisper_lanes import MAX_AUTO_LANES, ahead, available_cores, cpu_plan


def usable_cores() -> int:
    return len(os.sched_getaffinity(0))


@pytest.mark.parametrize("factor", [2, 16])
def test_omp_num_threads_above_the_cores_is_bounded_by_the_cores(monkeypatch, factor):
    monkeypatch.setenv("OMP_NUM_THREADS", str(usable_cores() * factor))
    assert available_cores() == usable_cores()


def test_the_loaded_model_gets_no_more_lanes_than_cores_under_a_large_omp_num_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", str(usable_cores() * 16))
    model = load_model(WhisperConfig(device="cpu"))
    assert replicas(model) == min(usable_cores(), MAX_AUTO_LANES)


def test_without_affinity_the_cores_are_the_cpu_count(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delattr("os.sched_getaffinity", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 6)
    assert available_cores(Path("/nonexistent/cpu.max")) == 6
    monkeypatch.setattr("os.cpu_count", lambda: None)  # unknown: one core
    assert available_cores(Path("/nonexistent/cpu.max")) == 1


def test_threads_per_lane_are_whole_threads():
    assert cpu_plan(8, 3, "fast", cores=8) == (3, 2)
    assert all(isinstance(n, int) for n in cpu_plan(8, 3, "fast", cores=8))


def test_lanes_run_at_most_that_many_at_once_with_one_more_queued():
    lanes = 3
    lock = threading.Lock()
    running, peak = 0, 0
    release = threading.Event()
    names: set[str] = set()

    def work(item: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
            names.add(threading.current_thread().name)
        release.wait(30)
        with lock:
            running -= 1
        return item * 10

    taken: list[int] = []

    class Items(list):
        def __iter__(self):
            for item in super().__iter__():
                taken.append(item)
                yield item

    results = ahead(work, Items(range(12)), lanes)
    threading.Timer(0.5, release.set).start()
    first = next(results)
    taken_at_first = len(taken)
    assert first == 0 and [first, *results] == [i * 10 for i in range(12)]
    assert peak == lanes, f"{peak} ran at once with {lanes} lanes"
    assert taken_at_first == lanes + 2  # the lanes, one queued, and one more once the first is done
    assert all(name.startswith("whisper-lane") for name in names)


def test_a_quota_under_one_core_is_one_core(tmp_path, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(8)), raising=False)
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("50000 100000\n")  # half a core
    assert available_cores(cpu_max) == 1
