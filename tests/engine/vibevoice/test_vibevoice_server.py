"""`--engine server`: chunks decoded by an OpenAI-compatible VibeVoice server, end to end.

The server is a loopback HTTP server started here with the tiny trained model behind it
(tiny_chat_server.py); Murmur still does VAD, chunking, speakers, stitching and exports.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import numpy as np
import pytest
from tiny_chat_server import TinyChatServer

from engine.backends.vibevoice import VibeVoiceBackend, VibeVoiceConfig
from engine.backends.vibevoice.server_client import ServerClient
from engine.cli import main
from engine.errors import Cancelled, ServerError
from engine.pipeline import Pipeline, PipelineConfig
from engine.speakers import SpeakerConfig
from engine.types import Chunk, Recording

NO_SPEAKERS = PipelineConfig(speakers=SpeakerConfig(diarizer="none"))


@pytest.fixture(scope="module")
def server(trained_model):
    with TinyChatServer(trained_model) as running:
        yield running


@pytest.fixture(scope="module")
def joined(trained_clips):
    """All clips in one recording, 0.5 s of silence apart, and one chunk per clip."""
    import soundfile as sf

    pieces, chunks, at = [], [], 0
    for i, (path, _) in enumerate(trained_clips):
        samples, _ = sf.read(path, dtype="float32")
        chunks.append(Chunk(i, at / 24000, (at + len(samples)) / 24000))
        pieces += [samples, np.zeros(12000, np.float32)]
        at += len(samples) + 12000
    return Recording(np.concatenate(pieces), 24000), chunks


def test_transcripts_through_the_server_equal_the_in_process_ones(server, trained_model, trained_clips):
    local = Pipeline.create("vibevoice", NO_SPEAKERS, model=str(trained_model), device="cpu")
    remote = Pipeline.create("vibevoice", NO_SPEAKERS, engine="server", server=server.url, concurrency=2)
    for path, reference in trained_clips:
        here, there = local.run(path), remote.run(path)
        assert there.utterances == here.utterances
        assert [u.text for u in there.utterances] == [r.text for r in reference]
    assert remote.backend.describe() == f"VibeVoice-ASR vibevoice at {server.url}"


def test_chunks_go_out_concurrently_and_each_comes_back(server, trained_model, joined):
    recording, chunks = joined
    before = server.requests
    config = VibeVoiceConfig(engine="server", server=server.url, concurrency=2)
    remote = {r.chunk.index: r for r in VibeVoiceBackend(config).transcribe(recording, chunks)}
    local = VibeVoiceBackend(VibeVoiceConfig(model=str(trained_model), device="cpu"))
    for result in local.transcribe(recording, chunks):
        assert remote[result.chunk.index].segments == result.segments
        assert remote[result.chunk.index].stats.generated_tokens == result.stats.generated_tokens
    assert server.requests - before == len(chunks)
    assert server.most_in_flight == 2


def test_the_cli_writes_the_server_transcript(server, trained_clips, tmp_path, capsys):
    path, reference = trained_clips[0]
    code = main([
        "transcribe", str(path), "--backend", "vibevoice", "--engine", "server", "--server", server.url,
        "--concurrency", "2", "--diarizer", "none", "--format", "json", "--out", str(tmp_path), "-q",
    ])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    data = json.loads((tmp_path / f"{path.stem}.json").read_text())
    assert [u["text"] for u in data["utterances"]] == [r.text for r in reference]


def test_a_busy_server_is_asked_again(trained_model, joined):
    recording, chunks = joined
    with TinyChatServer(trained_model, faults=[503, 503]) as busy:
        client = ServerClient(VibeVoiceConfig(engine="server", server=busy.url, concurrency=1), backoff=0.01)
        results = list(client.transcribe(recording, chunks[:1]))
    assert results[0].segments and results[0].stats.retries == 2
    assert busy.requests == 3


def test_a_server_that_keeps_failing_is_a_clear_error_after_bounded_retries(trained_model, joined):
    recording, chunks = joined
    with TinyChatServer(trained_model, faults=[500] * 5) as broken:
        config = VibeVoiceConfig(engine="server", server=broken.url, server_retries=1)
        with pytest.raises(ServerError, match=r"after 2 tries: HTTP 500 scripted failure 500"):
            list(ServerClient(config, backoff=0.01).transcribe(recording, chunks[:1]))
        assert broken.requests == 2


def test_a_refused_request_is_not_retried(trained_model, joined):
    recording, chunks = joined
    with TinyChatServer(trained_model, faults=[400]) as strict:
        config = VibeVoiceConfig(engine="server", server=strict.url)
        with pytest.raises(ServerError, match="refused a chunk: HTTP 400"):
            list(ServerClient(config, backoff=0.01).transcribe(recording, chunks[:1]))
        assert strict.requests == 1


def test_a_slow_server_times_out(trained_model, joined):
    recording, chunks = joined
    with TinyChatServer(trained_model, faults=[2.0]) as slow:
        config = VibeVoiceConfig(engine="server", server=slow.url, server_timeout=0.3, server_retries=0)
        with pytest.raises(ServerError, match=r"no answer within 0\.3 s"):
            list(ServerClient(config).transcribe(recording, chunks[:1]))


def test_cancel_does_not_wait_for_a_slow_server(trained_model, joined):
    recording, chunks = joined
    cancel = threading.Event()
    with TinyChatServer(trained_model, faults=[60.0]) as slow:  # holds the request for a minute
        config = VibeVoiceConfig(engine="server", server=slow.url)
        answers = ServerClient(config).transcribe(recording, chunks[:1], cancel)
        threading.Thread(target=lambda: (wait_for(lambda: slow.in_flight == 1), cancel.set())).start()
        with pytest.raises(Cancelled):
            list(answers)
        assert slow.in_flight == 1  # cancelled while the server still held the request


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_an_unreachable_server_is_one_error_line(trained_clips, capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path, _ = trained_clips[0]
    code = main([
        "transcribe", str(path), "--backend", "vibevoice", "--engine", "server",
        "--server", f"http://127.0.0.1:{port}", "--diarizer", "none", "-q",
    ])  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"cannot reach the VibeVoice server at http://127.0.0.1:{port}" in err[0]
    assert not (path.parent / f"{path.stem}.srt").exists()


def test_engine_and_server_go_together():
    with pytest.raises(ValueError, match="go together"):
        VibeVoiceConfig(engine="server")
    with pytest.raises(ValueError, match="go together"):
        VibeVoiceConfig(server="http://localhost:8000")
    with pytest.raises(ValueError, match="http:// or https://"):
        VibeVoiceConfig(engine="server", server="localhost:8000")


def test_the_loopback_server_runs_as_a_command_and_serves_the_cli(trained_model, trained_clips, tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "engine.testing.loopback_server", str(trained_model)]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
    try:
        first = server.stdout.readline()  # printed once the socket listens
        url = first.split(" at ")[1].split(" ")[0]
        path, reference = trained_clips[0]
        code = main([
            "transcribe", str(path), "--backend", "vibevoice", "--engine", "server", "--server", url,
            "--diarizer", "none", "--format", "json", "--out", str(tmp_path), "-q",
        ])  # fmt: skip
        assert code == 0
        data = json.loads((tmp_path / f"{path.stem}.json").read_text())
        assert [u["text"] for u in data["utterances"]] == [r.text for r in reference]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_closing_answers_a_held_request_at_once_and_leaves_nothing_running(trained_model, joined):
    # catches: request threads left as daemons (one still decoding when the test process exits
    # aborts it), or a scripted delay that close does not cut short (close waits out the minute)
    import urllib.error
    import urllib.request

    statuses: list[int] = []

    def ask(url: str) -> None:
        request = urllib.request.Request(f"{url}/v1/chat/completions", data=b"{}", method="POST")
        try:
            urllib.request.urlopen(request, timeout=30)
        except urllib.error.HTTPError as error:
            statuses.append(error.code)

    with TinyChatServer(trained_model, faults=[60.0]) as slow:
        asking = threading.Thread(target=ask, args=(slow.url,))
        asking.start()
        wait_for(lambda: slow.in_flight == 1)
    assert slow.in_flight == 0, "close returned while a request was still being answered"
    asking.join(timeout=30)
    assert statuses == [503]
    recording, chunks = joined
    cancel = threading.Event()
    with TinyChatServer(trained_model) as server:  # a client cancelled while the model decodes
        answers = ServerClient(VibeVoiceConfig(engine="server", server=server.url)).transcribe(
            recording, chunks[:1], cancel)  # fmt: skip
        threading.Thread(target=lambda: (wait_for(lambda: server.in_flight == 1), cancel.set())).start()
        with pytest.raises(Cancelled):
            list(answers)
    assert server.in_flight == 0, "the decode went on after close, on a thread nobody waits for"
