"""Recording through PortAudio: the demo played into a PulseAudio null sink, recorded from its monitor.

A PulseAudio server without hardware (`module-null-sink`) is started for the test; `murmur record
--input-device pulse` records through sounddevice → PortAudio → ALSA's pulse plugin while `paplay` plays
the demo into the sink. Where no PulseAudio server can start, the test skips and says why (the
file-fed tests of the same stream class still run: test_capture.py). A second test kills the
server mid-recording, as an unplugged device: the error is reported and the file kept.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import jiwer
import pytest
import soundfile as sf

from engine.evaluation.normalize import MurmurNormalizer
from engine.export import read_json
from engine.testing.pulse_sink import SINK, SinkUnavailable, running_sink
from tests.engine.live.conftest import ROOT, reference_text, write_clip


@pytest.fixture
def pulse() -> Iterator[tuple[dict[str, str], subprocess.Popen[str]]]:
    """The environment of a running PulseAudio server with a null sink (skips when none starts)."""
    with contextlib.ExitStack() as stack:
        try:
            sink = stack.enter_context(running_sink())
        except SinkUnavailable as exc:
            pytest.skip(str(exc))
        yield sink.env, sink.server


def test_the_demo_played_into_the_sink_is_recorded_and_transcribed(pulse, tmp_path: Path) -> None:
    pulse_env, _ = pulse
    clip = write_clip(tmp_path / "clip.wav", 0.0, 8.2)  # two turns: dave, then carol
    out = tmp_path / "out"
    env = {**pulse_env, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    recorder = subprocess.Popen(
        [sys.executable, "-m", "engine", "record", "--input-device", "pulse", "--seconds", "11",
         "--out", str(out), "--diarizer", "none", "--format", "json"],
        env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert recorder.stderr is not None
    line = recorder.stderr.readline()
    assert "recording pulse" in line, line + recorder.stderr.read()
    subprocess.run(["paplay", f"--device={SINK}", str(clip)], env=pulse_env, check=True, timeout=30)
    rest = recorder.stderr.read()
    assert recorder.wait(timeout=240) == 0, rest

    [flac] = out.glob("*.flac")
    assert sf.info(flac).duration == pytest.approx(11.0, abs=0.3)
    transcript = read_json(flac.with_suffix(".json"))
    norm = MurmurNormalizer()
    assert jiwer.wer(norm(reference_text(0.0, 8.2)), norm(transcript.text)) <= 0.25


def test_the_server_dying_mid_recording_is_reported_and_the_recording_kept(pulse, tmp_path: Path) -> None:
    env, server = pulse
    out = tmp_path / "out"
    recorder = subprocess.Popen(
        [sys.executable, "-m", "engine", "record", "--input-device", "pulse", "--out", str(out),
         "--no-transcribe"],
        env={**env, "PYTHONPATH": str(ROOT)}, cwd=ROOT, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert recorder.stderr is not None
    line = recorder.stderr.readline()
    assert "recording pulse" in line, line + recorder.stderr.read()
    time.sleep(4.0)
    server.kill()  # like pulling the USB plug
    rest = recorder.stderr.read()
    assert recorder.wait(timeout=30) == 1
    assert "unplugged" in rest and rest.count("murmur: error:") == 1
    [flac] = out.glob("*.flac")
    assert sf.info(flac).duration >= 1.0  # what was recorded is a complete, closed file
    assert not list(out.glob("*.recording.json"))
