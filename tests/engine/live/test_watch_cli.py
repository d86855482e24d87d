"""`murmur watch` as a user runs it (real watcher processes, real files): each file dropped into a
folder is transcribed once, whole, under its own name, across restarts, faults and a second watcher."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.engine.live.conftest import ROOT, small_tmpfs, write_clip


def start_watch(folder: Path, out: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TMPDIR": str(out.parent)}
    return subprocess.Popen(
        [sys.executable, "-m", "engine", "watch", str(folder), "--out", str(out), "--settle", "1.5",
         "--interval", "0.3", "--diarizer", "none", "--format", "txt"],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return out, err


def wait_for(paths: list[Path], timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, f"not written in time: {[p for p in paths if not p.exists()]}"
        time.sleep(0.3)


def test_dropped_files_are_transcribed_once_each_and_a_broken_one_is_skipped(tmp_path: Path) -> None:
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    watch = start_watch(inbox, out)
    write_clip(tmp_path / "first.flac", 0.0, 4.0).rename(inbox / "first.flac")  # dropped whole
    (inbox / "broken.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk" * 10)
    whole = write_clip(tmp_path / "slow.wav", 4.5, 8.0).read_bytes()
    with (inbox / "slow.wav").open("wb") as f:  # written in pieces, pausing in between
        for i in range(0, len(whole), len(whole) // 4 + 1):
            f.write(whole[i : i + len(whole) // 4 + 1])
            f.flush()
            time.sleep(0.8)
    wait_for([out / "first.txt", out / "slow.txt"])
    time.sleep(2.0)  # more scans: nothing is taken twice
    stdout, stderr = stop(watch)

    assert stdout.count("transcribed first.flac") == 1 and stdout.count("transcribed slow.wav") == 1
    assert "notes" in (out / "slow.txt").read_text().lower()  # the whole file, not its first piece
    assert stderr.count("skipped broken.wav") == 1
    state = json.loads((out / ".murmur-watch.json").read_text())
    assert {k: v["outcome"] for k, v in state.items()} == {"first.flac": "done", "slow.wav": "done",
                                                           "broken.wav": "failed"}  # fmt: skip

    # a restart remembers: only the file added since is transcribed
    mtime = (out / "first.txt").stat().st_mtime
    write_clip(inbox / "third.flac", 8.7, 11.0)
    watch = start_watch(inbox, out)
    wait_for([out / "third.txt"])
    time.sleep(2.0)
    stdout, stderr = stop(watch)
    assert "transcribed third.flac" in stdout and "first" not in stdout and "slow" not in stdout
    assert "broken" not in stderr
    assert (out / "first.txt").stat().st_mtime == mtime


def lines_until(stream, text: str, timeout: float = 180) -> list[str]:
    """Lines read from `stream` up to and including the first holding `text`."""
    seen, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()
        assert line, f"the stream ended before {text!r}: {seen}"
        seen.append(line)
        if text in line:
            return seen
    raise AssertionError(f"{text!r} not seen in time: {seen}")


def test_a_copy_pausing_longer_than_the_settle_time_gets_one_complete_transcript(tmp_path: Path) -> None:
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    watch = start_watch(inbox, out)
    whole = write_clip(tmp_path / "talk.wav", 0.0, 12.0).read_bytes()
    with (inbox / "talk.wav").open("wb") as f:
        f.write(whole[: len(whole) // 3])  # the first turn only
        f.flush()
        time.sleep(5.0)  # the copy stalls for more than three settle times
        f.write(whole[len(whole) // 3 :])
    wait_for([out / "talk.txt"])
    time.sleep(3.0)
    stdout, stderr = stop(watch)
    assert stdout.count("transcribed talk.wav") == 1
    assert stderr.count("waiting for talk.wav") == 1
    text = (out / "talk.txt").read_text().lower()
    assert "notes" in text  # the second turn (4.5–8.2 s), which the stalled copy did not hold yet
    state = json.loads((out / ".murmur-watch.json").read_text())
    assert state["talk.wav"]["size"] == len(whole)


def test_two_watchers_of_one_folder_transcribe_each_file_once(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    first = start_watch(inbox, tmp_path / "out1")
    assert first.stderr is not None
    lines_until(first.stderr, "watching")
    second = start_watch(inbox, tmp_path / "out2")
    _, err = second.communicate(timeout=120)
    assert second.returncode == 1 and "already watched" in err and "Traceback" not in err
    write_clip(tmp_path / "a.flac", 0.0, 4.0).rename(inbox / "a.flac")
    wait_for([tmp_path / "out1" / "a.txt"])
    stdout, _ = stop(first)
    assert stdout.count("transcribed a.flac") == 1 and not (tmp_path / "out2" / "a.txt").exists()


def test_same_stem_files_never_overwrite_each_others_transcript(tmp_path: Path) -> None:
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    watch = start_watch(inbox, out)
    write_clip(tmp_path / "meeting.wav", 0.0, 4.0).rename(inbox / "meeting.wav")
    wait_for([out / "meeting.txt"])
    write_clip(tmp_path / "meeting.flac", 4.5, 8.0).rename(inbox / "meeting.flac")
    wait_for([out / "meeting-2.txt"])
    stop(watch)
    first, second = (out / "meeting.txt").read_text().lower(), (out / "meeting-2.txt").read_text().lower()
    assert "notes" in second and "notes" not in first


def test_a_full_out_folder_and_a_removed_watch_folder_each_say_one_line_and_lose_nothing(
    tmp_path: Path,
) -> None:
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    with small_tmpfs(out, "64k"):
        filler = out / "filler"
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k", "count=64"], capture_output=True)
        watch = start_watch(inbox, out)
        assert watch.stderr is not None
        lines_until(watch.stderr, "watching")
        write_clip(tmp_path / "a.flac", 0.0, 4.0).rename(inbox / "a.flac")
        said = lines_until(watch.stderr, "cannot write the transcript of a.flac")
        assert "murmur-recovered" in said[-1]  # kept in a recovery file too
        filler.unlink()  # space again: the transcript kept in memory is written, not transcribed again
        wait_for([out / "a.txt"])
        shutil.rmtree(inbox)
        lines_until(watch.stderr, "cannot read the watch folder")
        inbox.mkdir()
        write_clip(tmp_path / "b.flac", 4.5, 8.0).rename(inbox / "b.flac")
        wait_for([out / "b.txt"])
        stdout, stderr = stop(watch)
    assert stdout.count("transcribed a.flac") == 1 and stdout.count("transcribed b.flac") == 1
    assert "Traceback" not in stderr and stderr.count("cannot read the watch folder") == 0  # said once, above
    [kept] = (tmp_path / "murmur-recovered").iterdir()
    assert kept.name.startswith("a-") and kept.suffix == ".json"


def test_a_file_moved_away_before_it_is_transcribed_is_named_and_not_recorded(tmp_path: Path, capfd) -> None:
    from engine.cli.watch import _Loop
    from engine.live.folder_watch import FolderWatcher
    from engine.pipeline import Pipeline, PipelineConfig
    from engine.speakers import SpeakerConfig

    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    write_clip(inbox / "a.flac", 0.0, 2.0)
    watcher = FolderWatcher(inbox, out / ".murmur-watch.json", 0.0)
    watcher.poll(now=0.0)
    [ready] = watcher.poll(now=1.0)
    (inbox / "a.flac").rename(tmp_path / "a.flac")  # moved away between the scan and the work
    pipeline = Pipeline.create("whisper", PipelineConfig(speakers=SpeakerConfig(diarizer="none")))
    _Loop(watcher, pipeline, ("txt",), out)._handle(ready, threading.Event())
    err = capfd.readouterr().err
    assert err.count("a.flac was moved away before it was transcribed") == 1 and "skipped" not in err
    assert "a.flac" not in watcher.state and not (out / "a.txt").exists()
