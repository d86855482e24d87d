"""The server client survives any server: endless, dripping, looping, deep, odd and empty replies.

A real HTTP server on 127.0.0.1 (a thread in this process) answers each request with one scripted
misbehaviour; every loop on its side is bounded, so a client that fails to stop cannot hang the test.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import socketserver
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from engine.backends.vibevoice import VibeVoiceConfig
from engine.backends.vibevoice.reply_guard import reply_cap
from engine.backends.vibevoice.server_client import ServerClient
from engine.errors import ServerError
from engine.pipeline import Pipeline, PipelineConfig
from engine.speakers import SpeakerConfig
from engine.types import Chunk, FinishReason, Recording, Stage

Behaviour = Callable[[socket.socket], None]
SEGMENT = '{"Start": 0.5, "End": 1.5, "Speaker": 0, "Content": "again and again"}'


def _headers(sock: socket.socket, extra: str = "") -> None:
    sock.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}\r\n".encode())


def _json(reply: str) -> Behaviour:
    def send(sock: socket.socket) -> None:
        body = reply.encode()
        _headers(sock, f"Content-Length: {len(body)}\r\n")
        sock.sendall(body)

    return send


def _chat(content: object, usage: object = None, raw_usage: str | None = None) -> Behaviour:
    usage_text = raw_usage if raw_usage is not None else json.dumps(usage or {})
    message = json.dumps({"role": "assistant", "content": content})
    return _json(f'{{"choices": [{{"message": {message}, "finish_reason": "stop"}}], "usage": {usage_text}}}')


def endless(sock: socket.socket) -> None:
    _headers(sock, "Transfer-Encoding: chunked\r\n")
    piece = b"a" * 65536
    for _ in range(3_000):  # at most 200 MB, and the client hangs up long before
        sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))


def drip(sock: socket.socket) -> None:
    _headers(sock, "Content-Length: 100000\r\n")
    for _ in range(600):  # one byte every 0.1 s, for at most a minute
        sock.sendall(b" ")
        time.sleep(0.1)


class Hostile:
    """Answers each request with `behaviour`, on a free port of 127.0.0.1."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                _read_request(self.request)
                with contextlib.suppress(OSError):  # the client hung up: what we want
                    outer.behaviour(self.request)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Hostile:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _read_request(sock: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(
            line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
        )
    )
    while len(body) < length:
        body += sock.recv(65536)


RECORDING = Recording(np.random.default_rng(0).normal(0, 0.1, 24000 * 4).astype(np.float32), 24000)
CHUNK = Chunk(0, 0.0, 4.0)


def ask(behaviour: Behaviour, **options: object) -> list:
    with Hostile(behaviour) as server:
        config = VibeVoiceConfig(engine="server", server=server.url, server_retries=0, **options)
        return list(ServerClient(config, backoff=0.01).transcribe(RECORDING, [CHUNK]))


def test_an_endless_reply_fails_the_chunk_once_past_a_cap_tied_to_its_token_budget():
    # without the cap the client reads all 200 MB the server sends and fails otherwise
    with pytest.raises(ServerError, match=r"sent more than [\d,]+ bytes for the chunk at 0:00–0:04") as err:
        ask(endless)
    assert "\n" not in str(err.value)
    assert reply_cap(256) < 1_000_000  # a 4 s chunk's budget: well under a megabyte is kept


def test_a_server_dripping_bytes_is_cut_off_at_the_request_deadline():
    # one deadline for the request, not one per byte: per byte, the drip (a byte every 0.1 s)
    # would never time out, and the client would fail only when the server gives up a minute later
    with pytest.raises(ServerError, match=r"no answer within 1 s"):
        ask(drip, server_timeout=1.0)


def test_a_looping_reply_is_cut_after_its_first_repeat():
    (result,) = ask(_chat("[" + ", ".join([SEGMENT] * 200) + "]"))
    assert result.finish_reason is FinishReason.LOOP
    assert [s.text for s in result.segments] == ["again and again"] * 2


def test_odd_usage_counts_are_read_as_zero_not_a_traceback():
    (result,) = ask(
        _chat(f"[{SEGMENT}]", raw_usage='{"prompt_tokens": Infinity, "completion_tokens": [1, 2]}')
    )
    assert result.stats.prompt_tokens == 0 and result.stats.generated_tokens == 0
    assert [s.text for s in result.segments] == ["again and again"]


def test_a_reply_nested_200000_deep_is_one_error_line():
    with pytest.raises(ServerError, match="unusable: its JSON is nested too deep"):
        ask(_json("[" * 200_000 + "]" * 200_000), budget="max")  # a budget whose cap lets 400 kB in


def test_a_reply_claiming_more_tokens_than_its_budget_is_refused():
    with pytest.raises(ServerError, match=r"claims 100000 tokens, more than the \d+ it was allowed"):
        ask(_chat(f"[{SEGMENT}]", usage={"completion_tokens": 100_000}))


@pytest.mark.parametrize(
    ("content", "says"),
    [(None, "holds no text; nothing was transcribed there"), ("{{{ ]]", "is not the model's segment list")],
)
def test_a_chunk_that_produced_nothing_is_named(content: object, says: str, caplog):
    with caplog.at_level(logging.WARNING):
        (result,) = ask(_chat(content))
    assert f"the chunk at 0:00–0:04 {says}" in caplog.text
    assert result.segments == ()


def test_a_server_that_is_down_is_reported_before_any_audio_is_decoded(tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    stages: list[Stage] = []
    pipeline = Pipeline.create(
        "vibevoice", PipelineConfig(speakers=SpeakerConfig(diarizer="none")),
        engine="server", server=f"http://127.0.0.1:{port}",
    )  # fmt: skip
    missing = tmp_path / "never-read.wav"  # not even opened: the server is checked first
    with pytest.raises(ServerError, match=f"cannot reach the VibeVoice server at http://127.0.0.1:{port}"):
        pipeline.run(missing, lambda p: stages.append(p.stage))
    assert stages == []
