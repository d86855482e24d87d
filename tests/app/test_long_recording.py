"""A three-hour recording: the window keeps answering while it decodes and analyses the file,
and the waveform shows all of it and any detail of it."""

from __future__ import annotations

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
    answered_while_busy: list[bool] = []
    timer = QTimer()
    timer.timeout.connect(lambda: answered_while_busy.append(window.session.busy))
    timer.start(20)
    assert window.open_path(path)
    wait_until(lambda: not window.session.busy, timeout=600)
    timer.stop()
    # the event loop kept running while the file loaded; how long it ever paused is measured by
    # bench/app_responsiveness.py, not gated here (timings on a shared machine are noise)
    assert answered_while_busy.count(True) >= 10, "the window did not answer while the file loaded"
    assert window.waveform.duration == pytest.approx(HOURS * 3600, abs=0.1)
    assert window.last_dialog is None and window.actions_by_name["transcribe"].isEnabled()
    for t0, t1 in ((0, HOURS * 3600), (5000, 5060), (5000, 5000.05)):
        window.waveform.show_range(t0, t1)
        assert not window.waveform.grab().isNull()
