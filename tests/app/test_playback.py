"""Playback: the read head's speed and bounds, and graceful behaviour without a sound device.

The last test plays through a real PortAudio stream on ALSA's null device (in a subprocess, since
PortAudio reads its device list once per process)."""

from __future__ import annotations

import ctypes.util
import importlib
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from app.playback import PlaybackSource, unavailable_reason

ROOT = Path(__file__).resolve().parents[2]


def test_reading_at_normal_speed_returns_the_samples_in_order():
    samples = np.arange(100, dtype=np.float32)
    head = PlaybackSource(samples, 10, start=1.0)
    np.testing.assert_array_equal(head.read(5), samples[10:15])
    assert head.position == pytest.approx(1.5)


def test_double_speed_skips_every_other_sample_and_half_speed_interpolates():
    samples = np.arange(100, dtype=np.float32)
    fast = PlaybackSource(samples, 10, speed=2.0)
    np.testing.assert_array_equal(fast.read(4), [0, 2, 4, 6])
    slow = PlaybackSource(samples, 10, speed=0.5)
    np.testing.assert_allclose(slow.read(4), [0, 0.5, 1.0, 1.5])


def test_reading_past_the_end_gives_silence_and_finishes():
    head = PlaybackSource(np.ones(10, np.float32), 10, start=0.5)
    out = head.read(20)
    assert out[:4].all() and not out[10:].any() and head.finished


def test_the_read_head_moves_by_speed_times_the_frames_and_stops_at_the_last_sample():
    fast = PlaybackSource(np.arange(100, dtype=np.float32), 10, speed=2.0)
    fast.read(4)
    assert fast.position == pytest.approx(0.8), "4 frames at 2x are 8 samples of the recording"
    head = PlaybackSource(np.arange(11, dtype=np.float32), 10)
    head.seek(1000.0)
    assert head.position == pytest.approx(1.0) and head.finished  # the last sample, not past it
    empty = PlaybackSource(np.zeros(0, np.float32), 10, start=5.0)
    assert empty.position == 0.0 and not empty.read(3).any() and empty.position == 0.0
    pair = PlaybackSource(np.array([0.0, 1.0], np.float32), 10, speed=0.5)
    np.testing.assert_allclose(pair.read(3), [0.0, 0.5, 0.0])  # a two-sample clip still interpolates


def test_speed_outside_the_supported_range_is_refused():
    with pytest.raises(ValueError, match="speed"):
        PlaybackSource(np.zeros(10, np.float32), 10, speed=4.0)


def test_this_machine_can_play_exactly_when_portaudio_lists_an_output_device():
    # catches: `query_devices()` asked without kind="output" (a machine with no output device, or
    # only microphones, told playback works); the no-device sentence changed
    try:
        import sounddevice as sd
    except (OSError, ImportError):
        pytest.skip("no PortAudio or sounddevice here (the two tests below make such a machine)")
    outputs = [device for device in sd.query_devices() if device["max_output_channels"] > 0]
    expected = None if outputs else "Playback is unavailable: no audio output device was found."
    assert unavailable_reason() == expected


def test_without_the_sounddevice_package_the_user_is_told_it_is_missing(monkeypatch):
    # catches: the ImportError sentence changed or swapped with the PortAudio one
    monkeypatch.setitem(sys.modules, "sounddevice", None)  # `import sounddevice` raises ImportError
    expected = "Playback is unavailable: the sounddevice package is not installed."
    assert unavailable_reason() == expected


def test_without_the_portaudio_library_the_user_is_told_which_package_to_install(monkeypatch):
    # catches: the OSError sentence changed (the package name libportaudio2 lost) or swapped
    if importlib.util.find_spec("sounddevice") is None:
        pytest.skip("sounddevice is not installed")
    # The library search finds nothing, as on a machine without libportaudio2: sounddevice's own
    # import then raises its OSError ("PortAudio library not found").
    monkeypatch.delitem(sys.modules, "sounddevice", raising=False)
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    with pytest.raises(OSError, match="PortAudio library not found"):
        importlib.import_module("sounddevice")
    expected = "Playback is unavailable: the PortAudio library is not installed (libportaudio2)."
    assert unavailable_reason() == expected


@pytest.mark.skipif(sys.platform != "linux", reason="uses ALSA's null device")
def test_playback_runs_to_the_end_on_a_null_audio_device(tmp_path):
    (tmp_path / ".asoundrc").write_text("pcm.!default { type null }\nctl.!default { type hw card 0 }\n")
    code = textwrap.dedent("""
        import time, numpy as np
        from app.playback import Player, unavailable_reason
        assert unavailable_reason() is None, unavailable_reason()
        player = Player(np.zeros(16000, np.float32), 16000)
        player.play(0.25)
        deadline = time.monotonic() + 10
        while player.playing and time.monotonic() < deadline:
            time.sleep(0.01)
        print(round(player.position, 2))
        player.pause()
    """)
    env = {**os.environ, "HOME": str(tmp_path)}
    command = [sys.executable, "-c", code]
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    if "PortAudio library" in out.stderr or ("sounddevice" in out.stderr and "No module" in out.stderr):
        pytest.skip("PortAudio is not installed")
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == pytest.approx(1.0, abs=0.01)


KEPT_STREAM = """
import json, subprocess, time
import numpy as np
from PySide6.QtWidgets import QApplication
from app.playback_controller import PlaybackController

def streams():  # the sound server's playback streams: what holds the device
    listed = subprocess.run(["pactl", "list", "short", "sink-inputs"], capture_output=True, text=True)
    return len(listed.stdout.split(chr(10))) - 1

def wait(condition):
    deadline = time.monotonic() + 10
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)

app = QApplication([])
controller = PlaybackController()
out = {"reason": controller.reason}
if controller.reason is None:
    controller.set_audio(np.zeros(8000, np.float32), 16000)
    wait(lambda: streams() > 0)
    out["open_before_play"] = streams()
    player = controller.player
    player.play(0.0)
    wait(lambda: not player.playing)
    out["first_end"] = round(player.position, 2)
    player.play(0.25)
    out["playing_again"] = player.playing
    wait(lambda: not player.playing)
    out["second_end"] = round(player.position, 2)
    out["streams_while_loaded"] = streams()
    controller.stop()
    wait(lambda: streams() == 0)
    out["after_stop"] = streams()
print(json.dumps(out))
"""


def test_the_device_is_opened_when_a_recording_loads_and_replays_after_the_end_until_let_go(tmp_path):
    # Opening PortAudio's first stream takes 0.1-0.3 s: it happens when the recording loads, not on
    # Space. One stream serves every play, also after the sound ran to its end, and stop lets it go.
    from tests.app.qt_helpers import run_window_on_sink

    out = run_window_on_sink(KEPT_STREAM, tmp_path)
    assert out["open_before_play"] == 1
    assert out["first_end"] == pytest.approx(0.5, abs=0.01)
    assert out["playing_again"] is True
    assert out["second_end"] == pytest.approx(0.5, abs=0.01)
    assert out["streams_while_loaded"] == 1
    assert out["after_stop"] == 0
