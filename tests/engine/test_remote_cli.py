"""`murmur transcribe --remote` when the server dies mid-job: the error line says what was kept,
and what it says was kept is there."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from engine.export import read_json
from tests.engine.serve.conftest import ROOT, Served, free_port, server, write_flac


def kill_at_first_line(served: Served) -> str:
    """A loopback relay to `served` that kills the server once a line event has passed through it
    to the client (the client sees a server that died mid-job); returns the relay's URL."""
    listener = socket.create_server(("127.0.0.1", free_port()))
    target = ("127.0.0.1", int(served.url.rsplit(":", 1)[1]))

    def pump(src: socket.socket, dst: socket.socket, watch: bool) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
                if watch and b"transcript.text.delta" in data:
                    served.process.kill()
        for end in (src, dst):  # the other side sees the connection end, as with the server itself
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def accept() -> None:
        with listener:
            while True:  # the client's health check, then its job
                client, _ = listener.accept()
                upstream = socket.create_connection(target)
                threading.Thread(target=pump, args=(client, upstream, False), daemon=True).start()
                threading.Thread(target=pump, args=(upstream, client, True), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}"


@pytest.mark.slow
def test_a_server_dying_mid_job_leaves_exactly_what_the_cli_says_it_kept(tmp_path: Path) -> None:
    from engine.audio.io import load_audio

    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000)
    audio = write_flac(tmp_path / "meeting.flac", demo.samples)  # five chunks
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TMPDIR": str(tmp_path)}
    with server("--diarizer", "none", "--batch-size", "1") as s:  # one chunk at a time
        relay = kill_at_first_line(s)
        client = subprocess.Popen(
            [sys.executable, "-m", "engine", "transcribe", str(audio), "--remote", relay, "--out",
             str(tmp_path / "out"), "--format", "txt", "-q"],
            env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        _, err = client.communicate(timeout=300)
    shutil.rmtree(s.tmp, ignore_errors=True)

    assert client.returncode == 1 and "Traceback" not in err, err
    assert "received are kept" not in err
    said = re.search(r"the (\d+) line\(s\) received were saved to (\S+\.json)", err)
    assert said is not None, err
    kept = read_json(Path(said.group(2)))
    assert Path(said.group(2)).parent == tmp_path / "murmur-recovered"
    assert len(kept.utterances) == int(said.group(1)) > 0 and all(u.text for u in kept.utterances)
