"""`murmur record --list-devices` on a machine with input devices, in this process: a PulseAudio
server with a null sink (engine/testing/pulse_sink.py) whose monitor ALSA's pulse plugin offers to
PortAudio as the inputs `pulse` and `default`; PortAudio is made to read its devices again for the
test (and again after it). Skips where no PulseAudio server can start.
"""

from __future__ import annotations

import re

import pytest

from engine.cli import main

ROW = re.compile(r"^[* ] +\d+  .+  \(\d+ ch, \d+ Hz\)$")  # "*   1  default  (32 ch, 44100 Hz)"


@pytest.fixture
def sink_inputs(portaudio_sink) -> dict[str, int]:
    """PortAudio pointed at a null sink's monitor: the index of each input device by name."""
    import sounddevice as sd

    return {d["name"]: d["index"] for d in sd.query_devices() if d["max_input_channels"] > 0}


def test_the_inputs_are_listed_one_a_line_with_the_default_marked(sink_inputs, capsys):
    # catches: the default's star on another device or missing; a row's number, name, channels or
    # rate dropped or reordered; "no input devices" said (or exit 1) when there are some
    assert main(["record", "--list-devices"]) == 0
    out, err = capsys.readouterr()
    rows = out.splitlines()
    assert err == "" and all(ROW.match(row) for row in rows), out
    assert f"* {sink_inputs['default']:3d}  default  (32 ch, 44100 Hz)" in rows
    assert f"  {sink_inputs['pulse']:3d}  pulse  (32 ch, 44100 Hz)" in rows
    assert len(rows) == len(sink_inputs) and [row[0] for row in rows].count("*") == 1
