"""Decode-engine tests run tiny float64 models: one thread is fastest for them (and keeps them
fast on a busy two-core machine, where a second spinning BLAS thread only waits). The device
check's modules (`bench/gpu_*.py`, which run on a GPU machine without the tests) are importable
here, as `bench/gpu_check.py` puts them on its own path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
