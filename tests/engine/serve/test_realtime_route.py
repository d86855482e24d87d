"""`WS /v1/realtime` in process: the route on uvicorn in a thread, on a loopback port, spoken to with
the `websockets` client as a live-audio client does (close codes and reasons as they travel).

The server is the part of `Server` the route reads (backend, detector, settings); its backend is the
scripted 16 kHz decoder of `test_realtime_session` (the socket's life is what is under test).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import uvicorn
from fastapi import FastAPI
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from engine.audio.vad import SileroVad
from engine.pipeline import PipelineConfig
from engine.serve import realtime
from engine.serve.config import ServeConfig
from engine.speakers import SpeakerConfig
from tests.engine.serve import test_realtime_session as scripted
from tests.engine.serve.conftest import KEY, free_port
from tests.engine.serve.test_realtime_session import RATE, Echo, append

detector, speech = scripted.detector, scripted.speech  # the same fixtures

DONE = "conversation.item.input_audio_transcription.completed"


@dataclass
class RealtimeServer:
    """What the route reads of a `Server`."""

    detector: SileroVad
    backend: Any = field(default_factory=Echo)
    config: ServeConfig = field(default_factory=ServeConfig)
    pipeline_config: PipelineConfig = field(default_factory=PipelineConfig)
    realtime_sessions: int = 0


@contextlib.contextmanager
def serving(server: RealtimeServer) -> Iterator[str]:
    """`server`'s `/v1/realtime` on a loopback port: its ws:// URL."""
    app = FastAPI()
    realtime.register(app, server)
    with running(app) as url:
        yield url


@contextlib.contextmanager
def running(app: FastAPI) -> Iterator[str]:
    """`app` on uvicorn in a thread on a loopback port: the ws:// URL of its `/v1/realtime`."""
    port = free_port()
    uv = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical", timeout_graceful_shutdown=2)
    )
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield f"ws://127.0.0.1:{port}/v1/realtime"
    finally:
        uv.should_exit = True
        thread.join(timeout=10)


def opened(url: str, key: str | None = None) -> ClientConnection:
    headers = {"Authorization": f"Bearer {key}"} if key else None
    socket = connect(url, additional_headers=headers, open_timeout=10, legacy=True)
    assert json.loads(socket.recv(timeout=10))["type"] == "transcription_session.created"
    rate = {"audio": {"input": {"format": {"type": "audio/pcm", "rate": RATE}}}}
    socket.send(json.dumps({"type": "session.update", "session": rate}))
    assert json.loads(socket.recv(timeout=10))["type"] == "session.updated"
    return socket


def events_until(socket: ClientConnection, kind: str, timeout: float = 10.0) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while not got or got[-1]["type"] != kind:
        got.append(json.loads(socket.recv(timeout=max(0.01, deadline - time.monotonic()))))
    return got


def closed_with(
    socket: ClientConnection, timeout: float = 10.0
) -> tuple[int | None, str, list[dict[str, Any]]]:
    """The close code and reason the server ended the socket with, and the events before them."""
    events = []
    with contextlib.suppress(ConnectionClosed):
        while True:
            events.append(json.loads(socket.recv(timeout=timeout)))
    return socket.close_code, socket.close_reason, events


def stream(socket: ClientConnection, samples: np.ndarray) -> None:
    for start in range(0, len(samples), RATE // 10):
        socket.send(json.dumps(append(samples[start : start + RATE // 10])))


def settled(server: RealtimeServer, timeout: float = 10.0) -> int:
    """The sessions still counted open once the server has had time to end them."""
    deadline = time.monotonic() + timeout
    while server.realtime_sessions and time.monotonic() < deadline:
        time.sleep(0.01)
    return server.realtime_sessions


def test_speech_through_the_socket_comes_back_as_completed_items_then_drained(detector, speech):
    # catches: finished items never looked for (no `completed` reaches the client), the session left
    # counted open after the client closed
    server = RealtimeServer(detector)
    with serving(server) as url:
        socket = opened(url)
        assert server.realtime_sessions == 1
        stream(socket, speech[: 6 * RATE])
        socket.send(json.dumps({"type": "input_audio_buffer.commit"}))
        events = events_until(socket, "murmur.drained")
        socket.close()
        assert settled(server) == 0
    committed = [e["item_id"] for e in events if e["type"] == "input_audio_buffer.committed"]
    assert committed and [e["item_id"] for e in events if e["type"] == DONE] == committed
    assert socket.close_code == 1000


def test_a_server_with_a_key_refuses_a_socket_without_it_at_the_handshake(detector):
    server = RealtimeServer(detector, config=ServeConfig(api_key=KEY))
    with serving(server) as url:
        for key in (None, "wrong-key-0123456789"):
            headers = {"Authorization": f"Bearer {key}"} if key else None
            with pytest.raises(InvalidStatus) as refused:  # refused at the handshake: no socket opens
                connect(url, additional_headers=headers, open_timeout=10, legacy=True)
            assert refused.value.response.status_code == 403
        assert server.realtime_sessions == 0
        socket = opened(url, KEY)
        socket.close()


@pytest.mark.parametrize(("frame", "reason"), [
    ("this is not json", "a frame is not a JSON event"),
    (b"\x00\x01", "binary frames are not accepted: send JSON events"),
])  # fmt: skip
def test_a_frame_that_is_not_a_json_event_is_an_error_and_closes_with_1007(detector, frame, reason):
    server = RealtimeServer(detector)
    with serving(server) as url:
        socket = opened(url)
        socket.send(frame)
        code, said, events = closed_with(socket)
        assert settled(server) == 0
    assert (code, events[-1]["type"], events[-1]["error"]["code"]) == (1007, "error", "invalid_event")
    assert said == reason


def test_a_session_error_closes_with_its_own_code_after_its_error_event(detector):
    server = RealtimeServer(detector)
    with serving(server) as url:
        socket = opened(url)
        socket.send(
            json.dumps({"type": "session.update", "session": {"audio": {"input": {"format": {"rate": 7}}}}})
        )
        code, said, events = closed_with(socket)
    assert code == 1003 and events[-1]["error"]["param"] == "session.audio.input.format.rate"
    assert said.startswith("a sample rate of 7 Hz is not supported")


@pytest.mark.parametrize("rate", ["1" * 200, "é" * 200])
def test_a_long_reason_is_cut_to_what_a_close_frame_holds_and_the_code_still_arrives(detector, rate):
    # catches: a reason longer than a close frame's 123 bytes (in UTF-8: a non-ASCII value in the
    # message), which fails the close: the client sees 1006 and never learns why
    server = RealtimeServer(detector)
    with serving(server) as url:
        socket = opened(url)
        socket.send(
            json.dumps(
                {"type": "session.update", "session": {"audio": {"input": {"format": {"rate": rate}}}}}
            )
        )
        code, said, _ = closed_with(socket)
    assert code == 1003 and said.startswith(f"a sample rate of '{rate[:10]}")
    assert len(said.encode()) >= 121 and len(said.encode()) <= 123


def test_a_model_that_cannot_take_live_audio_is_refused_at_once_with_1003(detector):
    class Wide(Echo):
        sample_rate = 24000

    server = RealtimeServer(detector, backend=Wide())
    with serving(server) as url:
        socket = connect(url, open_timeout=10, legacy=True)
        code, _, events = closed_with(socket)
        assert settled(server) == 0
    assert code == 1003 and [e["error"]["code"] for e in events] == ["unsupported_model"]


def test_a_failure_in_the_server_ends_only_that_session_with_1011(detector, caplog):
    class Broken(Echo):
        def describe(self) -> str:
            raise RuntimeError("the model vanished")

    server = RealtimeServer(detector, backend=Broken())
    with serving(server) as url:
        code, said, _ = closed_with(connect(url, open_timeout=10, legacy=True))
        assert settled(server) == 0
        server.backend = Echo()
        opened(url).close()  # the server goes on
    assert (code, said) == (1011, "the server failed: the model vanished")
    (failed,) = [r for r in caplog.records if r.name == "engine.serve.realtime"]  # for the operator
    assert failed.getMessage() == "a realtime session failed" and failed.exc_info is not None


def test_a_silent_client_is_closed_with_4408_but_not_while_its_lines_are_owed(detector, speech, monkeypatch):
    # catches: a client waiting for a slow decoder's lines cut off as idle, or an idle one held forever
    monkeypatch.setattr(realtime, "IDLE_SECONDS", 0.3)
    hold = threading.Event()
    server = RealtimeServer(detector, backend=Echo(hold=hold))
    with serving(server) as url:
        socket = opened(url)
        stream(socket, speech[: 6 * RATE])
        socket.send(json.dumps({"type": "input_audio_buffer.commit"}))
        time.sleep(1.0)  # three idle periods while the decoder holds the lines
        hold.set()
        events = events_until(socket, "murmur.drained")
        assert not any(e["type"] == "error" for e in events)
        code, said, idle = closed_with(socket)
        assert settled(server) == 0
    assert (code, said) == (4408, "idle")
    assert idle[-1]["error"] == {"type": "invalid_request_error", "code": "idle_timeout",
                                 "message": "nothing received for 0.3 s", "param": None}  # fmt: skip


def test_a_client_that_leaves_mid_speech_stops_its_decoding(detector, speech):
    # catches: the session's decoder left decoding the queue of a client that has gone
    hold = threading.Event()
    backend = Echo(hold=hold)
    server = RealtimeServer(detector, backend=backend)
    with serving(server) as url:
        socket = opened(url)
        stream(socket, speech)
        events_until(socket, "input_audio_buffer.committed")
        events_until(socket, "input_audio_buffer.committed")  # two items wait for the decoder
        socket.close()
        threading.Timer(0.3, hold.set).start()
        assert settled(server) == 0
    assert len(backend.heard) <= 1


def with_speakers(url: str, speech) -> list[dict]:
    """The events of one session asking for speakers: `speech` sent, committed, drained."""
    socket = opened(url)
    socket.send(json.dumps({"type": "session.update", "session": {"murmur": {"speakers": True}}}))
    stream(socket, speech)
    socket.send(json.dumps({"type": "input_audio_buffer.commit"}))
    events = events_until(socket, "murmur.drained")
    socket.close()
    return events


def test_a_server_with_a_voice_library_it_cannot_read_says_so_and_goes_on(detector, speech, tmp_path):
    broken = tmp_path / "voices.db"
    broken.write_bytes(b"not a voice library")
    named = PipelineConfig(speakers=SpeakerConfig(voices=str(broken)))
    server = RealtimeServer(detector, pipeline_config=named)
    with serving(server) as url:
        events = with_speakers(url, speech[: 4 * RATE])
    assert [e["error"]["code"] for e in events if e["type"] == "error"] == ["voice_library"]
    assert all(li["speaker"].startswith("S") for e in events if e["type"] == DONE for li in e["lines"])


def test_a_server_without_voices_never_reads_the_library_of_whoever_runs_it(
    detector, speech, tmp_path, monkeypatch
):
    # catches: a server not started with --voices naming live speakers from the default library
    import engine.voices

    default = tmp_path / "default-voices.db"
    default.write_bytes(b"not a voice library")  # read, it would be reported
    monkeypatch.setattr(engine.voices, "default_library_path", lambda: default)
    with serving(RealtimeServer(detector)) as url:
        events = with_speakers(url, speech[: 4 * RATE])
    assert [e for e in events if e["type"] == "error"] == []
