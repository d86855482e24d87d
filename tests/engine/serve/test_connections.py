"""The guarded h11 protocol (`engine.serve.connections`) in process: uvicorn serving the real app on
a loopback port in a thread, spoken to byte by byte over sockets."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator

import uvicorn

from engine.backends import create_backend
from engine.pipeline import PipelineConfig
from engine.serve.app import create_app
from engine.serve.config import ServeConfig
from engine.serve.connections import protocol
from engine.serve.server import Server
from engine.speakers import SpeakerConfig
from tests.engine.serve.conftest import free_port

HEALTH = b"GET /health HTTP/1.1\r\nHost: murmur\r\n\r\n"


@contextlib.contextmanager
def serving(**limits) -> Iterator[int]:
    config = ServeConfig(**limits)
    server = Server(create_backend("whisper"), None, PipelineConfig(speakers=SpeakerConfig(diarizer="none")),
                    config)  # fmt: skip  # /health needs no model
    port = free_port()
    uv = uvicorn.Server(uvicorn.Config(create_app(server), host="127.0.0.1", port=port, http=protocol(config),
                                       log_level="warning"))  # fmt: skip
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not uv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield port
    finally:
        uv.should_exit = True
        thread.join(timeout=30)
        server.close()


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=30)


def answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response.status, dict(response.getheaders()), response.read()


def closed(sock: socket.socket) -> bool:
    """Whether the server closes `sock` within the socket's 30 s timeout."""
    try:
        return sock.recv(65536) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_a_silent_or_dripping_client_is_disconnected_after_the_timeout():
    with serving(client_timeout=0.3) as port:
        silent, dripping = connect(port), connect(port)
        dripping.sendall(b"GET /health HTTP/1.1\r\nHost: mur")
        assert closed(silent) and closed(dripping)
        fine = connect(port)
        fine.sendall(HEALTH)
        assert answer(fine)[0] == 200


def test_after_an_answer_the_next_request_head_has_the_same_deadline():
    with serving(client_timeout=0.3) as port:
        sock = connect(port)
        sock.sendall(HEALTH)
        assert answer(sock)[0] == 200
        sock.sendall(b"GET /hea")  # stops the keep-alive timer; only the head deadline is left
        assert closed(sock)


def test_a_request_whose_body_keeps_coming_is_not_cut_by_the_head_deadline():
    with serving(client_timeout=1.0) as port:
        sock = connect(port)
        part = b'--b0\r\nContent-Disposition: form-data; name="file"; filename="x.wav"\r\n\r\n'
        body = part + b"x" * 300 + b"\r\n--b0--\r\n"
        head = (b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: murmur\r\nContent-Length: %d\r\n"
                b"Content-Type: multipart/form-data; boundary=b0\r\n\r\n")  # fmt: skip
        sock.sendall(head % len(body))
        for start in range(0, len(body), 16):  # about 2.5 s in all, a piece every 0.1 s
            sock.sendall(body[start : start + 16])
            time.sleep(0.1)
        status, _, text = answer(sock)
        assert status == 400 and "not an audio file" in json.loads(text)["error"]["message"]


def test_one_connection_beyond_the_limit_is_answered_503_and_closed():
    with serving(max_connections=2) as port:
        first, second = connect(port), connect(port)
        first.sendall(HEALTH)
        assert answer(first)[0] == 200  # both are taken before the third knocks
        second.sendall(HEALTH)
        assert answer(second)[0] == 200
        third = connect(port)
        status, headers, body = answer(third)
        assert status == 503 and headers["retry-after"] == "5" and headers["connection"] == "close"
        message = "the server has too many open connections; try again shortly"
        assert json.loads(body) == {"error": {"message": message, "type": "rate_limit_error"}}
        assert closed(third)
        second.sendall(HEALTH)
        assert answer(second)[0] == 200  # the two within the limit are still served
        first.close()
        deadline = time.monotonic() + 30
        while True:  # once the server has seen the first go, a new one is taken
            again = connect(port)
            again.sendall(HEALTH)
            status = answer(again)[0]
            again.close()
            if status == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert status == 200
