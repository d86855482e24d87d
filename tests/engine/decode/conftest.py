"""Decode-engine tests run tiny float64 models: one thread is fastest for them (and keeps them
fast on a busy two-core machine, where a second spinning BLAS thread only waits)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
