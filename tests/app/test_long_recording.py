"""A three-hour recording: the window keeps answering while it decodes and analyses the file,
and the waveform shows all of it and any detail of it."""

from __future__ import annotations

import time
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import QTimer
from qt_helpers import wait_until

HOURS = 3
RATE = 16000


def write_long_flac(path: Path) -> None:
    """Three hours of faint noise with a 440 Hz tone in every other minute, written a minute at a time."""
    rng = np.random.default_rng(0)
    t = np.arange(RATE * 60) / RATE
    noise = (rng.standard_normal(len(t)) * 0.003).astype(np.float32)
    tone = (0.3 * np.sin(2 * np.pi * 440 * t) * ((t % 10) < 3)).astype(np.float32)
    with sf.SoundFile(path, "w", RATE, 1, "PCM_16") as f:
        for minute in range(HOURS * 60):
            f.write(noise + tone * (minute % 2))


@pytest.mark.slow
def test_a_three_hour_file_loads_while_the_window_keeps_answering(make_window, tmp_path):
    path = tmp_path / "three-hours.flac"
    write_long_flac(path)
    window = make_window()
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(20)
    started = time.monotonic()
    assert window.open_path(path)
    wait_until(lambda: not window.session.busy, timeout=600)
    timer.stop()
    elapsed = time.monotonic() - started
    gaps = [b - a for a, b in pairwise(ticks)]
    assert max(gaps) < 1.0, f"the window froze for {max(gaps):.2f} s"
    assert len(ticks) > elapsed / 0.02 * 0.5, "the event loop fell behind while loading"
    assert window.waveform.duration == pytest.approx(HOURS * 3600, abs=0.1)
    assert window.last_dialog is None and window.actions_by_name["transcribe"].isEnabled()
    for t0, t1 in ((0, HOURS * 3600), (5000, 5060), (5000, 5000.05)):
        window.waveform.show_range(t0, t1)
        assert not window.waveform.grab().isNull()
