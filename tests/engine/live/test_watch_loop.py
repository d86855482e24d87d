"""`murmur watch`'s loop in process: what it says, what it records, what it keeps when OUT refuses.

`engine.cli.watch.run` is called with the flags a user types, on real files and a real
`FolderWatcher`; only the model is replaced, by a pipeline that answers at once with a transcript
naming the file (the watcher processes with whisper are `test_watch_cli.py`, too slow for
mutation runs).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path

import pytest

from engine.cli import watch
from engine.errors import Cancelled, MurmurError
from engine.live.folder_watch import STATE_NAME, FolderWatcher
from engine.live.watch_state import FolderLock
from engine.types import Speaker, Transcript, Utterance
from tests.engine.live.conftest import write_clip


class QuickPipeline:
    """Transcribes a file as one line naming it; refuses `broken*` files as not audio."""

    def __init__(self, cancel_on: str | None = None) -> None:
        self.runs: list[str] = []
        self.cancel_on = cancel_on

    def run(self, path: Path, progress, cancel: threading.Event) -> Transcript:
        self.runs.append(path.name)
        if path.name == self.cancel_on:
            cancel.set()  # Ctrl-C while this file is transcribed: the event the watcher handed on
            raise Cancelled("stopped")
        if not path.exists():
            raise MurmurError(f"{path.name} does not exist")
        if path.name.startswith("broken"):
            raise MurmurError("not a recording")
        return Transcript((Utterance(0.0, 1.0, f"the words of {path.name}", "S1"),), (Speaker("S1", "Ann"),),
                          duration=1.0, source=path.name)  # fmt: skip


def flags(inbox: Path, out: Path, *more: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    watch.add_arguments(parser)
    return parser.parse_args([str(inbox), "--out", str(out), "--settle", "0", "--interval", "0.05",
                              "--format", "txt", *more])  # fmt: skip


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    folder = tmp_path / "inbox"
    folder.mkdir()
    write_clip(folder / "a.flac", 0.0, 1.0)
    write_clip(folder / "b.flac", 1.0, 2.0)
    return folder


@pytest.fixture
def pipeline(monkeypatch) -> QuickPipeline:
    """The quick pipeline, handed out where the watcher builds its own (which is built too, from the
    same flags, and checked: the model itself loads only at a first file, which this one answers)."""
    made, real = QuickPipeline(), watch._pipeline
    made.built = []

    def build(args):
        made.built.append(real(args))
        return made

    monkeypatch.setattr(watch, "_pipeline", build)
    return made


def test_once_transcribes_each_file_once_says_so_and_a_restart_does_nothing_again(
    inbox: Path, tmp_path: Path, pipeline: QuickPipeline, capfd
) -> None:
    write_clip(inbox / "broken.flac", 2.0, 3.0)
    out = tmp_path / "out"
    assert watch.run(flags(inbox, out, "--once")) == 0
    said = capfd.readouterr()
    assert sorted(pipeline.runs) == ["a.flac", "b.flac", "broken.flac"]
    assert (out / "a.txt").read_text().strip().endswith("the words of a.flac")
    assert sorted(said.out.splitlines()) == ["transcribed a.flac → a.txt", "transcribed b.flac → b.txt"]
    assert said.err.splitlines() == [f"watching {inbox} → {out} (Ctrl-C stops)",
                                     "murmur: skipped broken.flac: not a recording",
                                     "murmur: stopped watching"]  # fmt: skip
    state = json.loads((out / STATE_NAME).read_text())
    assert {name: e["outcome"] for name, e in state.items()} == {"a.flac": "done", "b.flac": "done",
                                                                 "broken.flac": "failed"}  # fmt: skip
    assert state["broken.flac"]["detail"] == "not a recording"
    assert watch.run(flags(inbox, out, "--once")) == 0  # the lock was let go; nothing is done twice
    assert len(pipeline.runs) == 3


def test_once_waits_for_a_file_to_settle_before_it_stops(inbox: Path, tmp_path: Path, pipeline) -> None:
    args = flags(inbox, tmp_path / "out", "--once")
    args.settle = 0.4
    assert watch.run(args) == 0
    assert sorted(pipeline.runs) == ["a.flac", "b.flac"]


def test_a_folder_already_watched_a_bad_format_and_an_out_that_is_a_file_are_refused(
    inbox: Path, tmp_path: Path, pipeline, capfd
) -> None:
    out = tmp_path / "out"
    held = FolderLock(inbox, out)
    try:
        assert watch.run(flags(inbox, out)) == 1
    finally:
        held.release()
    assert capfd.readouterr().err.startswith(f"murmur: error: {inbox} is already watched")
    assert watch.run(flags(inbox, out, "--format", "txt,nope")) == 1
    assert capfd.readouterr().err.startswith("murmur: error: unknown export format nope")
    (tmp_path / "file").write_text("x")
    assert watch.run(flags(inbox, tmp_path / "file")) == 1
    said = capfd.readouterr().err
    assert said == f"murmur: error: --out: cannot write into {tmp_path / 'file'}: it is not a folder\n"
    assert pipeline.runs == []


def test_ctrl_c_during_a_file_stops_the_watcher_and_the_file_is_taken_again_next_time(
    inbox: Path, tmp_path: Path, monkeypatch, capfd
) -> None:
    out, cancel = tmp_path / "out", threading.Event()
    stopping = QuickPipeline(cancel_on="a.flac")
    monkeypatch.setattr(watch, "_pipeline", lambda args: stopping)
    args = flags(inbox, out)
    args.cancel = cancel
    assert watch.run(args) == 0 and cancel.is_set()  # the user's Ctrl-C event reached the pipeline
    assert capfd.readouterr().err.endswith("murmur: stopped watching\n")
    assert "a.flac" not in json.loads((out / STATE_NAME).read_text() if (out / STATE_NAME).exists() else "{}")
    again = QuickPipeline()
    monkeypatch.setattr(watch, "_pipeline", lambda args: again)
    assert watch.run(flags(inbox, out, "--once")) == 0  # the lock was let go
    assert "a.flac" in again.runs and (out / "a.txt").exists()


def ready_files(inbox: Path, out: Path) -> tuple[FolderWatcher, list]:
    watcher = FolderWatcher(inbox, out / STATE_NAME, 0.0)
    watcher.poll(now=0.0)
    return watcher, sorted(watcher.poll(now=1.0), key=lambda r: r.path.name)


def test_a_transcript_out_refuses_is_kept_said_once_and_written_when_it_can_be(
    inbox: Path, tmp_path: Path, monkeypatch, capfd
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    out = tmp_path / "out"
    (out / "a.txt").mkdir(parents=True)  # OUT will not take a.txt
    watcher, (a, b) = ready_files(inbox, out)
    pipeline = QuickPipeline()
    loop = watch._Loop(watcher, pipeline, ("txt",), out)
    loop._handle(a, threading.Event())
    loop._handle(b, threading.Event())
    said = capfd.readouterr()
    [kept] = (tmp_path / "tmp" / "murmur-recovered").iterdir()
    assert said.err == (f"murmur: cannot write the transcript of a.flac into {out} (Is a directory); kept in "
                        f"{kept} and in memory, written as soon as it can be\n")  # fmt: skip
    assert said.out == "transcribed b.flac → b.txt\n" and "the words of a.flac" in kept.read_text()
    assert kept.name.startswith("a-")  # named after the transcript it keeps
    assert list(loop.unwritten) == ["a.flac"] and "a.flac" not in watcher.state
    args = flags(inbox, out, "--once")
    loop.run(args, threading.Event())  # still refused: not said again, not transcribed again
    assert capfd.readouterr() == ("", "") and pipeline.runs == ["a.flac", "b.flac"]
    (out / "a.txt").rmdir()
    loop.run(args, threading.Event())
    assert capfd.readouterr().out == "transcribed a.flac → a.txt\n"
    assert loop.unwritten == {} and watcher.state["a.flac"]["outcome"] == "done"
    assert pipeline.runs == ["a.flac", "b.flac"]


def test_a_state_that_cannot_be_saved_is_said_once_until_it_can_be_again(inbox: Path, tmp_path: Path,
                                                                          capfd) -> None:  # fmt: skip
    out = tmp_path / "out"
    write_clip(inbox / "c.flac", 2.0, 3.0)
    watcher, (a, b, c) = ready_files(inbox, out)
    (out / STATE_NAME).mkdir(parents=True)  # the state file cannot be replaced
    loop = watch._Loop(watcher, QuickPipeline(), ("txt",), out)
    loop._handle(a, threading.Event())
    assert capfd.readouterr().err == (
        f"murmur: cannot save the watch state {out / STATE_NAME} (Is a directory); going on: "
        "files done from now on may be transcribed again after a restart\n")  # said at the first failure
    loop._handle(b, threading.Event())
    assert capfd.readouterr().err == ""  # and not again
    (out / STATE_NAME).rmdir()
    loop._handle(c, threading.Event())
    assert capfd.readouterr().err == "" and not loop.state_failing
    assert set(json.loads((out / STATE_NAME).read_text())) == {"a.flac", "b.flac", "c.flac"}  # kept in memory


def test_a_file_moved_away_before_it_is_transcribed_is_named_and_not_recorded(inbox: Path, tmp_path: Path,
                                                                               capfd) -> None:  # fmt: skip
    out = tmp_path / "out"
    watcher, (a, _) = ready_files(inbox, out)
    (inbox / "a.flac").rename(tmp_path / "a.flac")
    watch._Loop(watcher, QuickPipeline(), ("txt",), out)._handle(a, threading.Event())
    assert capfd.readouterr().err == "murmur: a.flac was moved away before it was transcribed\n"
    assert "a.flac" not in watcher.state and not (out / "a.txt").exists()


def test_the_pipeline_is_built_from_the_flags_given(inbox: Path, tmp_path: Path, pipeline) -> None:
    assert watch.run(flags(inbox, tmp_path / "out", "--once", "--diarizer", "none")) == 0
    [built] = pipeline.built
    assert built.backend.name == "whisper" and built.config.speakers.diarizer == "none"


def test_watch_needs_a_folder_and_out_and_says_what_each_flag_is(capsys) -> None:
    parser = argparse.ArgumentParser(prog="murmur watch")
    watch.add_arguments(parser)
    text = " ".join(parser.format_help().split())
    assert "murmur watch [-h] --out OUT" in text and text.count(" DIR") >= 2
    assert "DIR the folder to watch" in text
    assert "--out OUT folder of the transcripts (and the state file)" in text
    assert "--settle SETTLE seconds a file must stay unchanged before it is taken (default 2)" in text
    assert "--interval INTERVAL seconds between scans (default 1)" in text
    assert "--once stop when every file present is handled" in text
    given = parser.parse_args(["inbox", "--out", "transcripts"])
    assert (given.settle, given.interval, given.once) == (2.0, 1.0, False)
    with pytest.raises(SystemExit):
        parser.parse_args(["inbox"])
    assert "the following arguments are required: --out" in capsys.readouterr().err


def test_ctrl_c_while_nothing_arrives_stops_the_watcher(inbox: Path, tmp_path: Path, pipeline, capfd) -> None:
    args = flags(inbox, tmp_path / "out")
    args.cancel = threading.Event()
    watching = threading.Thread(target=watch.run, args=(args,))
    watching.start()
    deadline = time.monotonic() + 10
    while len(pipeline.runs) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    args.cancel.set()
    watching.join(10)
    assert not watching.is_alive() and capfd.readouterr().err.endswith("murmur: stopped watching\n")


def test_the_watchers_notes_are_said_once(inbox: Path, tmp_path: Path, pipeline, capfd) -> None:
    whole = (inbox / "a.flac").read_bytes()
    (inbox / "cut.flac").write_bytes(whole[: len(whole) // 2])  # a copy that stopped half-way
    assert watch.run(flags(inbox, tmp_path / "out", "--once")) == 0
    notes = [line for line in capfd.readouterr().err.splitlines() if "cut.flac" in line]
    assert len(notes) == 1 and notes[0].startswith("murmur: waiting for cut.flac: it stopped growing, but ")
    assert "cut.flac" not in pipeline.runs


def test_a_transcript_neither_out_nor_the_recovery_folder_takes_stays_in_memory(inbox, tmp_path, monkeypatch,
                                                                               capfd) -> None:  # fmt: skip
    (tmp_path / "tmp").mkdir()
    (tmp_path / "tmp" / "murmur-recovered").write_text("a file where the recovery folder should be")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    out = tmp_path / "out"
    (out / "a.txt").mkdir(parents=True)
    watcher, (a, _) = ready_files(inbox, out)
    loop = watch._Loop(watcher, QuickPipeline(), ("txt",), out)
    loop._handle(a, threading.Event())
    said = capfd.readouterr().err
    assert said == (f"murmur: cannot write the transcript of a.flac into {out} (Is a directory); "
                    "kept in memory, written as soon as it can be\n")  # fmt: skip
    assert list(loop.unwritten) == ["a.flac"]


def test_files_sharing_a_stem_get_their_own_transcripts(inbox, tmp_path, pipeline, capfd) -> None:
    write_clip(inbox / "a.wav", 2.0, 3.0)
    out = tmp_path / "out"
    assert watch.run(flags(inbox, out, "--once", "--format", "txt,srt")) == 0
    said = sorted(capfd.readouterr().out.splitlines())
    flac_first = "transcribed a.flac → a.txt, a.srt" in said
    first, second = ("a.flac", "a.wav") if flac_first else ("a.wav", "a.flac")
    assert said == sorted([f"transcribed {first} → a.txt, a.srt", f"transcribed {second} → a-2.txt, a-2.srt",
                           "transcribed b.flac → b.txt, b.srt"])  # fmt: skip
    assert (out / "a.txt").read_text().strip().endswith(f"the words of {first}")
    assert (out / "a-2.txt").read_text().strip().endswith(f"the words of {second}")
