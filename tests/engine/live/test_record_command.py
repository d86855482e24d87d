"""`murmur record` as a user runs it, in this process (`engine.cli.main`): a file played at real-time
speed through the same capture path as a microphone, Ctrl-C as a real SIGINT, cut-short recordings
left by a real `FlacWriter`, and the transcript the bundled whisper model writes after a recording."""

from __future__ import annotations

import os
import re
import shutil
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.cli import build_parser, main
from engine.cli.record import run
from engine.live.flac_writer import FlacWriter, marker_path
from engine.live.sources import NO_MICROPHONE, list_devices
from engine.progress import format_clock
from tests.engine.live.conftest import write_clip


def record(out: Path, *flags: str) -> int:
    return main(["record", "--out", str(out), *flags])


def recordings(out: Path) -> list[Path]:
    return sorted(out.glob("recording-*.flac"))


def cut_short(folder: Path, seconds: float) -> Path:
    """A recording flushed but never closed, with its marker, as a killed recorder leaves it."""
    live = folder / "live" / "recording-20260101-090000.flac"
    writer = FlacWriter(live, 16000)
    writer.write(sf.read(write_clip(folder / "speech.wav", 0.0, seconds), dtype="float32")[0])
    writer.flush()
    shutil.copyfile(live, folder / live.name)
    shutil.copyfile(marker_path(live), marker_path(folder / live.name))
    writer.close()
    shutil.rmtree(folder / "live")
    (folder / "speech.wav").unlink()
    return folder / live.name


def test_a_recording_of_the_seconds_asked_is_kept_whole_and_said_where(tmp_path: Path, capfd) -> None:
    clip = write_clip(tmp_path / "clip.flac", 0.0, 4.0)
    out = tmp_path / "out"
    assert record(out, "--play", str(clip), "--seconds", "1.5", "--no-transcribe") == 0
    [path] = recordings(out)
    err = capfd.readouterr().err.splitlines()
    seconds = sf.info(path).duration
    assert err == [f"recording file clip.flac to {path} (Ctrl-C stops)",
                   f"recorded {format_clock(seconds)} to {path}"]  # fmt: skip
    assert 1.5 <= seconds < 1.9 and not marker_path(path).exists()  # within a few blocks of the time asked
    assert sorted(p.name for p in out.iterdir()) == [path.name]  # no transcript asked for, none written


def ctrl_c_when(ready: Callable[[], bool], returned: threading.Event) -> threading.Thread:
    """A thread that sends this process one SIGINT (a Ctrl-C) once `ready()`, unless the command
    under test has returned by then: a SIGINT after it would interrupt the test run itself."""

    def press() -> None:
        while not returned.wait(0.02):
            if ready():
                os.kill(os.getpid(), signal.SIGINT)
                return

    thread = threading.Thread(target=press)
    thread.start()
    return thread


def record_pressing_ctrl_c(out: Path, ready: Callable[[], bool], *flags: str) -> int:
    returned = threading.Event()
    presser = ctrl_c_when(ready, returned)
    try:
        return record(out, *flags)
    finally:
        returned.set()
        presser.join()


def test_without_out_the_recording_is_made_in_the_current_folder(tmp_path: Path, monkeypatch) -> None:
    clip = write_clip(tmp_path / "clip.flac", 0.0, 1.0)
    monkeypatch.chdir(tmp_path)
    assert main(["record", "--play", str(clip), "--seconds", "0.3", "--no-transcribe"]) == 0
    [path] = recordings(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.flac", path.name]


def test_ctrl_c_stops_the_recording_and_keeps_it(tmp_path: Path, capfd) -> None:
    clip = write_clip(tmp_path / "clip.flac", 0.0, 6.0)
    at = time.monotonic() + 1.0
    assert record_pressing_ctrl_c(tmp_path, lambda: time.monotonic() >= at, "--play", str(clip),
                                  "--no-transcribe") == 0  # fmt: skip
    [path] = recordings(tmp_path)
    assert 0.5 <= sf.info(path).duration < 3.0  # stopped at the Ctrl-C, not at the end of the input
    assert f"recorded {format_clock(sf.info(path).duration)} to {path}" in capfd.readouterr().err


def test_a_cut_short_recording_is_named_at_the_next_start_and_recover_makes_it_whole(
    tmp_path: Path, capfd
) -> None:
    partial = cut_short(tmp_path, 3.0)
    clip = write_clip(tmp_path / "clip.flac", 0.0, 1.0)
    assert record(tmp_path, "--play", str(clip), "--seconds", "0.3", "--no-transcribe") == 0
    hint = f"murmur: {partial} was cut short; `murmur record --recover --out {tmp_path}` keeps it"
    assert capfd.readouterr().err.splitlines()[0] == hint
    assert record(tmp_path, "--recover") == 0
    recovered = sf.info(partial).duration
    assert 2.7 < recovered <= 3.0 and not marker_path(partial).exists()
    assert capfd.readouterr().out == f"recovered {partial}: {format_clock(recovered)}\n"
    assert record(tmp_path, "--recover") == 0  # nothing left to recover is not an error
    assert capfd.readouterr().err == f"murmur: no recording was cut short in {tmp_path}\n"


def test_an_input_that_fails_mid_recording_is_said_and_the_exit_status_says_so(tmp_path: Path, capfd) -> None:
    clip = write_clip(tmp_path / "clip.flac", 0.0, 4.0)
    data = bytearray(clip.read_bytes())
    data[len(data) // 2 :] = bytes(len(data) - len(data) // 2)  # the second half: zeros
    damaged = tmp_path / "damaged.flac"
    damaged.write_bytes(bytes(data))
    out = tmp_path / "out"
    assert record(out, "--play", str(damaged), "--no-transcribe") == 1
    [path] = recordings(out)
    said = [line for line in capfd.readouterr().err.splitlines() if "damaged.flac stopped after" in line]
    cause = said[-1].removeprefix("murmur: error: ")
    # said when it happens (the recording ends: not "goes on"), and again at the end
    assert cause.startswith("file damaged.flac stopped after")
    assert said == [f"murmur: {cause}", f"murmur: error: {cause}"]
    assert 0.5 < sf.info(path).duration < 3.0 and not marker_path(path).exists()


def test_a_live_model_that_will_not_load_is_said_once_and_the_recording_goes_on(
    tmp_path: Path, capfd
) -> None:
    # catches: a live decoding failure worded as the end of the recording, or said more than once
    clip = write_clip(tmp_path / "clip.flac", 0.0, 3.0)
    out = tmp_path / "out"
    flags = ("--play", str(clip), "--live", "--model", str(tmp_path / "no model"), "--no-transcribe")
    assert record(out, *flags) == 0
    [path] = recordings(out)
    err = capfd.readouterr().err.splitlines()
    failed = (
        f"murmur: the whisper model folder '{tmp_path / 'no model'}' does not exist; the recording goes on"
    )
    assert err.count(failed) == 1 and len(err) == 3, err
    assert sf.info(path).duration == pytest.approx(3.0, abs=0.15)


def test_an_input_failing_mid_recording_is_still_transcribed_up_to_the_failure(tmp_path: Path, capfd) -> None:
    clip = write_clip(tmp_path / "clip.flac", 0.0, 8.0)
    data = bytearray(clip.read_bytes())
    data[len(data) * 5 // 8 :] = bytes(len(data) - len(data) * 5 // 8)  # damaged after the first turn
    damaged = tmp_path / "damaged.flac"
    damaged.write_bytes(bytes(data))
    out = tmp_path / "out"
    assert record(out, "--play", str(damaged), "--format", "txt", "--diarizer", "none") == 1
    [path] = recordings(out)
    assert "murmur: error: file damaged.flac stopped after" in capfd.readouterr().err
    assert "meeting short" in (out / f"{path.stem}.txt").read_text()


def test_ctrl_c_pressed_while_murmur_starts_stops_the_recording_at_once(tmp_path: Path, capfd) -> None:
    clip = write_clip(tmp_path / "clip.flac", 0.0, 3.0)
    flags = ["record", "--play", str(clip), "--out", str(tmp_path), "--no-transcribe"]
    args = build_parser().parse_args(flags)
    args.cancel = threading.Event()
    args.cancel.set()  # as `main` sets it for a Ctrl-C during the imports, before the recording began
    assert run(args) == 0
    [path] = recordings(tmp_path)
    assert f"recorded 0:00 to {path}" in capfd.readouterr().err.splitlines()  # not the whole input


def test_an_unknown_export_format_is_refused_before_anything_is_recorded(tmp_path: Path, capfd) -> None:
    out = tmp_path / "out"
    assert record(out, "--play", str(tmp_path / "never read.flac"), "--format", "txt,doc") == 1
    assert capfd.readouterr().err.startswith("murmur: error: unknown export format doc; choose from ")
    assert not out.exists()


def test_the_old_device_flag_is_refused_with_the_new_name(tmp_path: Path, capfd) -> None:
    assert record(tmp_path, "--device", "3", "--no-transcribe") == 2
    assert capfd.readouterr().err == ("murmur record: error: --device is now --input-device (the microphone; "
                                      "--list-devices shows them)\n")  # fmt: skip
    assert list(tmp_path.iterdir()) == []


def test_an_input_device_given_by_number_is_looked_up_by_number(tmp_path: Path, capfd) -> None:
    assert record(tmp_path, "--input-device", "987654", "--no-transcribe") == 1
    err = capfd.readouterr().err
    assert err == "murmur: error: the input device 987654 cannot be used: Error querying device 987654\n"
    assert list(tmp_path.iterdir()) == []  # no recording file for a device that never opened


def test_recording_from_the_default_microphone_where_there_is_none_says_so_in_a_sentence(
    tmp_path: Path, capfd
) -> None:
    if list_devices():
        pytest.skip("this machine has an input device")
    assert record(tmp_path, "--no-transcribe") == 1
    assert capfd.readouterr().err == f"murmur: error: {NO_MICROPHONE}\n"
    assert list(tmp_path.iterdir()) == []


def test_a_model_that_will_not_load_after_recording_is_named_and_the_recording_kept(
    tmp_path: Path, capfd
) -> None:
    clip = write_clip(tmp_path / "clip.flac", 0.0, 2.0)
    out = tmp_path / "out"
    assert record(out, "--play", str(clip), "--seconds", "0.5", "--model", str(tmp_path / "no model")) == 1
    [path] = recordings(out)
    # said once, after the recording: without --live no model is loaded while it goes on
    assert capfd.readouterr().err.splitlines() == [
        f"recording file clip.flac to {path} (Ctrl-C stops)",
        f"recorded {format_clock(sf.info(path).duration)} to {path}",
        f"murmur: error: the whisper model folder '{tmp_path / 'no model'}' does not exist",
    ]
    assert sf.info(path).duration >= 0.5 and not marker_path(path).exists()


def test_listing_devices_where_there_are_none_says_so(tmp_path: Path, capfd) -> None:
    if list_devices():
        pytest.skip("this machine has an input device")
    assert record(tmp_path, "--list-devices") == 1
    assert capfd.readouterr() == ("", "murmur: no input devices found\n")


def test_an_input_that_ends_at_once_is_not_transcribed(tmp_path: Path, capfd) -> None:
    empty = tmp_path / "empty.wav"
    sf.write(empty, np.zeros(0, np.float32), 16000)
    out = tmp_path / "out"
    assert record(out, "--play", str(empty)) == 0
    [path] = recordings(out)
    assert f"recorded 0:00 to {path}" in capfd.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == [path.name]


def test_after_recording_the_transcript_is_written_beside_it(tmp_path: Path, capfd) -> None:
    clip = write_clip(tmp_path / "clip.flac", 0.0, 4.0)  # "I'd like to keep this meeting short if we can"
    out = tmp_path / "out"
    assert record(out, "--play", str(clip), "--format", "txt,srt", "--diarizer", "none") == 0
    [path] = recordings(out)
    assert {p.name for p in out.iterdir()} == {path.name, f"{path.stem}.srt", f"{path.stem}.txt"}
    header, *text = (out / f"{path.stem}.txt").read_text().splitlines()
    assert re.fullmatch(r"\[[0-9:.]+\]", header)  # timestamped, and no speaker: --diarizer none was heard
    assert "meeting" in " ".join(text).lower() and "short" in " ".join(text).lower()
    assert capfd.readouterr().out == ""  # the transcript goes to the files; only --live prints lines


def test_ctrl_c_while_transcribing_stops_it_and_keeps_the_recording(tmp_path: Path, capfd) -> None:
    clip = write_clip(tmp_path / "clip.flac", 0.0, 4.0)
    out = tmp_path / "out"

    closed_at: list[float] = []

    def transcribing() -> bool:  # the recording closed 0.3 s ago: the transcription has begun
        if not closed_at and any(p.stat().st_size and not marker_path(p).exists() for p in recordings(out)):
            closed_at.append(time.monotonic())
        return bool(closed_at) and time.monotonic() >= closed_at[0] + 0.3

    flags = ("--play", str(clip), "--seconds", "1", "--format", "txt", "--diarizer", "none")
    assert record_pressing_ctrl_c(out, transcribing, *flags) == 130
    [path] = recordings(out)
    assert "murmur: transcription cancelled; the recording is kept" in capfd.readouterr().err.splitlines()
    assert sorted(p.name for p in out.iterdir()) == [path.name] and sf.info(path).duration >= 1.0


def test_live_prints_each_line_as_it_is_spoken_and_the_transcript_follows(tmp_path: Path, capfd) -> None:
    clip = write_clip(tmp_path / "clip.flac", 0.0, 4.5)  # "I'd like to keep this meeting short if we can"
    out = tmp_path / "out"
    began = time.monotonic()
    assert record(out, "--live", "--play", str(clip), "--format", "txt", "--diarizer", "none") == 0
    took = time.monotonic() - began
    [path] = recordings(out)
    printed = capfd.readouterr()
    said = re.search(r"of audio in ([0-9.]+) s \(real-time factor", printed.err)
    assert said and 0 < float(said.group(1)) < took  # the full run's own time, not a clock reading
    live, final = printed.out.splitlines()
    assert re.fullmatch(r"\[0:0\d\] S1: .*meeting short.*", live)  # while recording, a provisional speaker
    assert re.fullmatch(r"\[0:0\d\] [^:]*meeting short.*", final)  # the full run after it: --diarizer none
    assert (out / f"{path.stem}.txt").exists()
