"""`murmur record --live --remote URL`: the demo played into a PulseAudio null sink, recorded from
its monitor, streamed to a running `murmur serve` subprocess, whose lines the recorder prints."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import jiwer
import soundfile as sf

from engine.evaluation.normalize import MurmurNormalizer
from tests.engine.live.conftest import ROOT, reference_text, write_clip
from tests.engine.live.test_portaudio_capture import SINK, pulse  # noqa: F401  (the fixture)
from tests.engine.serve.conftest import server

LINE = re.compile(r"^\[(?:\d+:)?\d+:\d\d\] (?:(S\d+): )?(.+)$")  # "[0:05] S1: text"


def test_record_live_remote_prints_the_servers_lines_of_what_it_heard(pulse, tmp_path: Path):  # noqa: F811
    pulse_env, _ = pulse
    clip = write_clip(tmp_path / "clip.wav", 0.0, 8.2)  # two turns: dave, then carol
    out = tmp_path / "out"
    with server("--diarizer", "none") as served:
        recorder = subprocess.Popen(
            [sys.executable, "-m", "engine", "record", "--input-device", "pulse", "--seconds", "11", "--live",
             "--remote", served.url, "--out", str(out), "--no-transcribe"],
            env={**pulse_env, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}, cwd=ROOT,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert recorder.stderr is not None
        started = recorder.stderr.readline()
        assert "recording pulse" in started, started + recorder.stderr.read()
        subprocess.run(["paplay", f"--device={SINK}", str(clip)], env=pulse_env, check=True, timeout=30)
        printed, errors = recorder.communicate(timeout=240)
        assert recorder.returncode == 0, errors
        deadline = time.monotonic() + 10
        while served.metrics()["murmur_realtime_sessions"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert served.metrics()["murmur_realtime_sessions"] == 0  # the stream ended with the recording
    found = [m for m in map(LINE.match, printed.splitlines()) if m]
    lines = [m.group(2) for m in found]
    assert len(lines) >= 2, printed + errors
    # catches: the client not asking for speakers (as a local `record --live` has them) or the
    # server's speaker dropped on the way to the screen
    assert all(m.group(1) for m in found) and len({m.group(1) for m in found}) == 2, printed
    norm = MurmurNormalizer()
    assert jiwer.wer(norm(reference_text(0.0, 8.2)), norm(" ".join(lines))) <= 0.3
    [flac] = out.glob("*.flac")
    assert sf.info(flac).duration > 10.0  # the recording is kept here as without --remote
