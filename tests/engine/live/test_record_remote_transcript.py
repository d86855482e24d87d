"""`murmur record --remote URL` without `--live`, in this process (`engine.cli.main`): a file played at
real-time speed as the input, then the recording sent to the real `/v1/audio/transcriptions` app on
uvicorn in a thread, whose jobs end with a known transcript (`test_openai_shapes`' registry). No
model loads, so the whole command, from the first line to the exports and the exit status, runs in
about a second: the full transcript's step after a recording, a Ctrl-C during it, an export that
cannot be written."""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import soundfile as sf

from engine.cli import main
from engine.live.flac_writer import marker_path
from engine.progress import format_clock
from engine.serve.app import create_app
from engine.serve.formats import verbose
from engine.serve.jobs import Job
from tests.engine.live.conftest import write_clip
from tests.engine.serve.test_openai_shapes import TRANSCRIPT, AppServer, InstantRegistry
from tests.engine.serve.test_realtime_route import running

pytest.importorskip("fastapi")


@dataclass
class GatedRegistry(InstantRegistry):
    """`InstantRegistry` whose jobs wait for `gate`, then end with `TRANSCRIPT` (cancelled if the
    client has gone by then)."""

    gate: threading.Event = field(default_factory=threading.Event)
    submitted: threading.Event = field(default_factory=threading.Event)

    def _run(self, job: Job, path: Path) -> None:
        self.submitted.set()
        while not self.gate.wait(0.01) and not job.cancel_event.is_set():
            pass
        path.unlink(missing_ok=True)
        if job.cancel_event.is_set():
            self.counts["cancelled"] += 1
            job.end("cancelled", {"type": "error", "error": {"message": "cancelled", "type": "cancelled"}})
            return
        lines = [{"start": u.start, "end": u.end, "text": u.text, "chunk": 0, "chunk_speaker": u.speaker}
                 for u in TRANSCRIPT.utterances]  # fmt: skip
        job.emit({"type": "transcript.text.delta", "lines": lines})  # as a real job sends each chunk's
        job.transcript = TRANSCRIPT
        job.end("done", {"type": "transcript.text.done", "text": TRANSCRIPT.text, **verbose(TRANSCRIPT)})
        self.counts["done"] += 1


@contextmanager
def transcribing(tmp_path: Path, registry: InstantRegistry) -> Iterator[str]:
    """The app on a loopback port: its http:// base URL, as a user passes it to `--remote`."""
    (tmp_path / "server").mkdir()
    app = create_app(AppServer(folder=tmp_path / "server", registry=registry))
    with running(app) as url:
        yield url.replace("ws://", "http://").removesuffix("/v1/realtime")


def record(out: Path, clip: Path, url: str, *flags: str) -> int:
    return main(["record", "--out", str(out), "--play", str(clip), "--seconds", "0.5", "--remote", url,
                 "--diarizer", "none", *flags])  # fmt: skip


def the_recording(out: Path) -> Path:
    [path] = out.glob("recording-*.flac")
    assert not marker_path(path).exists()
    return path


def test_after_recording_the_servers_transcript_is_written_beside_it_in_the_formats_asked(
    tmp_path: Path, capfd
) -> None:
    # catches: `_finalise` given no formats, or not called; the exit status after a transcript
    # (`else 1`); the transcript printed to the terminal without --live; timestamps left off
    clip = write_clip(tmp_path / "clip.flac", 0.0, 2.0)
    out = tmp_path / "out"
    registry = GatedRegistry()
    registry.gate.set()
    with transcribing(tmp_path, registry) as url:
        assert record(out, clip, url, "--format", "txt,srt") == 0
    path = the_recording(out)
    assert {p.name for p in out.iterdir()} == {path.name, f"{path.stem}.srt", f"{path.stem}.txt"}
    timed = "[00:00:00] Alice\nHello there.\n\n[00:00:02] Bob\nHow are you?\n"  # the server's, with times
    assert (out / f"{path.stem}.txt").read_text() == timed
    printed = capfd.readouterr()
    seconds = sf.info(path).duration
    assert printed.out == ""
    assert printed.err.splitlines() == [f"recording file clip.flac to {path} (Ctrl-C stops)",
                                        f"recorded {format_clock(seconds)} to {path}"]  # fmt: skip


def test_an_input_failing_mid_recording_is_transcribed_and_the_exit_status_still_says_so(
    tmp_path: Path, capfd
) -> None:
    # catches: exit 0, or 2, after a failed input once its transcript is written
    clip = write_clip(tmp_path / "clip.flac", 0.0, 4.0)
    data = bytearray(clip.read_bytes())
    data[len(data) // 4 :] = bytes(len(data) - len(data) // 4)  # all but the first second: zeros
    damaged = tmp_path / "damaged.flac"
    damaged.write_bytes(bytes(data))
    out = tmp_path / "out"
    registry = GatedRegistry()
    registry.gate.set()
    with transcribing(tmp_path, registry) as url:
        code = main(["record", "--out", str(out), "--play", str(damaged), "--remote", url, "--format", "txt"])
    assert code == 1
    path = the_recording(out)
    assert "How are you?" in (out / f"{path.stem}.txt").read_text()
    assert "murmur: error: file damaged.flac stopped after" in capfd.readouterr().err


def test_ctrl_c_while_the_server_transcribes_stops_it_and_keeps_the_recording(tmp_path: Path, capfd) -> None:
    # catches: the cancel's message lost, printed to stdout, or exit 1 (or 131) for a Ctrl-C
    clip = write_clip(tmp_path / "clip.flac", 0.0, 2.0)
    out = tmp_path / "out"
    registry = GatedRegistry()  # the job waits: only a cancel ends it

    def press() -> None:  # one Ctrl-C, once the server has the recording
        if registry.submitted.wait(30):
            os.kill(os.getpid(), signal.SIGINT)

    presser = threading.Thread(target=press)
    with transcribing(tmp_path, registry) as url:
        presser.start()
        try:
            assert record(out, clip, url, "--format", "txt") == 130
        finally:
            registry.gate.set()
            presser.join()
    path = the_recording(out)
    assert sorted(p.name for p in out.iterdir()) == [path.name] and sf.info(path).duration >= 0.5
    printed = capfd.readouterr()
    assert printed.out == ""
    assert printed.err.splitlines()[-1] == "murmur: transcription cancelled; the recording is kept"


def test_a_transcript_that_cannot_be_written_is_said_kept_and_the_exit_status_says_so(
    tmp_path: Path, capfd, monkeypatch
) -> None:
    # catches: `murmur record` exiting 0 when its exports could not be written (the fixed defect)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # where the transcript is kept
    clip = write_clip(tmp_path / "clip.flac", 0.0, 2.0)
    out = tmp_path / "out"
    registry = GatedRegistry()

    def block_the_export() -> None:  # once the server has the recording: its .txt's name taken
        if registry.submitted.wait(30):
            [path] = out.glob("recording-*.flac")
            (out / f"{path.stem}.txt").mkdir()
        registry.gate.set()

    blocker = threading.Thread(target=block_the_export)
    with transcribing(tmp_path, registry) as url:
        blocker.start()
        try:
            code = record(out, clip, url, "--format", "txt")
        finally:
            registry.gate.set()
            blocker.join()
    assert code == 1
    path = the_recording(out)
    said = capfd.readouterr().err.splitlines()
    [saved] = (tmp_path / "tmp" / "murmur-recovered").glob(f"{path.stem}-*.json")
    assert said[-1] == (f"murmur: error: could not write the transcript of {path.name} to {out}: "
                        f"Is a directory; the transcript was saved to {saved}")  # fmt: skip
