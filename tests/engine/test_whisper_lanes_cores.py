"""An `OMP_NUM_THREADS` above the cores this process may use does not give whisper more lanes
than cores: the loaded model runs no more calls side by side than there are cores to run them."""

from __future__ import annotations

import os

import pytest

from engine.backends.whisper import WhisperConfig, load_model
from engine.backends.whisper_decode import replicas
from engine.backends.whisper_lanes import MAX_AUTO_LANES, available_cores


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
