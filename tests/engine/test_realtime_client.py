"""`RealtimeClient` against the real `/v1/realtime` route on uvicorn in this process (a loopback port),
as `murmur record --live --remote` and the app's recording use it: audio in as it is captured,
lines out, the server's errors and close codes reported. The server's decoder is the scripted one
of `test_realtime_session` (each line says how many samples its segment had; the client is what is
under test).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from fastapi import FastAPI, WebSocket

from engine.errors import ServerError
from engine.remote.realtime_client import RealtimeClient, RemoteLine, realtime_url
from engine.serve import realtime
from engine.serve.config import ServeConfig
from tests.engine.serve import test_realtime_session as scripted
from tests.engine.serve.conftest import KEY, free_port
from tests.engine.serve.test_realtime_route import RealtimeServer, running, serving
from tests.engine.serve.test_realtime_session import RATE, Echo, found_at

detector, speech = scripted.detector, scripted.speech  # the same fixtures


class Heard:
    """What a client reports, from its receiving thread."""

    def __init__(self) -> None:
        self.lines: list[RemoteLine] = []
        self.errors: list[str] = []

    def client(self, url: str, **options) -> RealtimeClient:
        return RealtimeClient(url, options.pop("key", None), self.lines.append, self.errors.append, **options)


def captured(client: RealtimeClient, samples: np.ndarray) -> None:
    for start in range(0, len(samples), RATE // 10):  # 100 ms blocks, as a microphone delivers them
        client.send(samples[start : start + RATE // 10])


def test_a_base_url_becomes_the_servers_realtime_address():
    assert realtime_url("http://host:8000") == "ws://host:8000/v1/realtime"
    assert realtime_url("https://host/v1/") == "wss://host/v1/realtime"
    assert realtime_url("ws://host:1/") == "ws://host:1/v1/realtime"
    assert realtime_url("wss://host/v1/realtime") == "wss://host/v1/realtime"  # already the endpoint


def test_audio_captured_before_and_after_connecting_comes_back_as_every_line_in_order(detector, speech):
    # catches: audio captured before the socket opened dropped or sent after later audio, samples
    # scaled or clipped wrongly on the way to PCM16, a line lost, doubled or reordered
    loud = speech * 3  # peaks past full scale: clipped, not wrapped around
    backend = Echo()
    server = RealtimeServer(detector, backend=backend, config=ServeConfig(api_key=KEY))
    heard = Heard()
    with serving(server) as url:
        client = heard.client(url.replace("ws://", "http://").removesuffix("/v1/realtime"), key=KEY)
        captured(client, loud[: 3 * RATE])  # while the socket opens
        assert not client.connected
        client.start()
        assert client.connected and client.close_code is None
        captured(client, loud[3 * RATE :])
        assert client.finish(timeout=10)
    assert not client.connected and client.close_code == 1000 and heard.errors == []
    assert client.lines == len(heard.lines) == 2 * len(backend.heard) >= 6
    sent = np.concatenate([(np.clip(loud, -1, 1) * 32767).astype("<i2") / 32768, np.zeros(RATE)])
    pairs = zip(heard.lines[::2], heard.lines[1::2], strict=True)
    for (first, second), audio in zip(pairs, backend.heard, strict=True):
        assert (first.text, second.text) == (f"- {len(audio)}", "two")
        assert first.speaker is None and second.end == pytest.approx(
            first.start + len(audio) / RATE, abs=0.002
        )
        assert found_at(audio, sent.astype(np.float32), first.start)
    assert heard.lines[-1].end == pytest.approx(12.0, abs=0.05)  # the whole recording, early audio too


def test_speakers_and_a_language_asked_by_the_client_reach_its_lines(detector, speech):
    # catches: the client's settings left out of its `session.update`
    server = RealtimeServer(detector)
    heard = Heard()
    with serving(server) as url:
        client = heard.client(url, speakers=True, language="fr")
        client.start()
        captured(client, speech[: 4 * RATE])
        assert client.finish()  # no timeout: as long as the lines take
    assert heard.lines and all(line.text.startswith("fr ") or line.text == "two" for line in heard.lines)
    assert heard.lines[0].text.startswith("fr ")
    assert all(line.speaker is not None and line.speaker.startswith("S") for line in heard.lines)


def test_the_servers_error_is_reported_with_its_message(detector):
    heard = Heard()
    with serving(RealtimeServer(detector)) as url:
        client = heard.client(url, language="xx")
        client.start()
        assert client.finish(timeout=10)
    assert heard.errors == ["echo does not speak 'xx'"]


def test_speech_the_server_has_closed_counts_as_behind_until_its_lines_come(detector, speech):
    # catches: an item never taken off the waiting list once its lines came (the lag grows for ever)
    hold = threading.Event()
    server = RealtimeServer(detector, backend=Echo(hold=hold))
    heard = Heard()
    with serving(server) as url:
        client = heard.client(url)
        client.start()
        assert client.behind_seconds() == 0.0
        before = time.monotonic()
        captured(client, speech[: 6 * RATE])
        deadline = time.monotonic() + 10
        while client.behind_seconds() == 0.0:
            assert time.monotonic() < deadline, "no speech was closed"
            time.sleep(0.01)
        later = time.monotonic() + 5
        assert 5.0 <= client.behind_seconds(later) <= later - before
        assert client.behind_seconds(now=1e-9) == 0.0  # a clock from before the speech: never negative
        hold.set()
        assert client.finish(timeout=10)
    assert heard.lines and client.behind_seconds() == 0.0


def test_finish_gives_up_after_its_timeout_when_the_lines_do_not_come(detector, speech):
    hold = threading.Event()
    heard = Heard()
    with serving(RealtimeServer(detector, backend=Echo(hold=hold))) as url:
        client = heard.client(url)
        client.start()
        captured(client, speech[: 4 * RATE])
        began = time.monotonic()
        assert not client.finish(timeout=0.5)
        waited = time.monotonic() - began
        hold.set()
    assert waited >= 0.5 and not client.connected and heard.lines == []


def test_a_stream_the_server_ends_is_reported_with_its_close_code(detector, speech, monkeypatch):
    # catches: a client that goes on sending into a closed socket (an exception in the capture thread)
    # or waits its whole timeout for lines that cannot come
    monkeypatch.setattr(realtime, "IDLE_SECONDS", 0.3)
    heard = Heard()
    with serving(RealtimeServer(detector)) as url:
        client = heard.client(url)
        client.start()
        deadline = time.monotonic() + 10
        while client.connected:
            assert time.monotonic() < deadline, "the idle client was not closed"
            time.sleep(0.01)
        client.send(speech[:RATE])  # after the close: dropped, no exception
        began = time.monotonic()
        assert not client.finish(timeout=10)
    assert time.monotonic() - began < 10 and client.close_code == 4408
    assert heard.errors == ["nothing received for 0.3 s"]


def test_a_server_that_cannot_be_reached_is_a_server_error_naming_its_address():
    url = f"http://127.0.0.1:{free_port()}"
    client = Heard().client(url)
    with pytest.raises(
        ServerError, match=f"cannot open the live stream at ws://127.0.0.1:{url.rsplit(':', 1)[1]}"
    ):
        client.start()
    assert not client.connected


class Peer:
    """A scripted other end of `/v1/realtime`: notes the handshake's headers and the client's events,
    sends `events` once the session is set, and `murmur.drained` after a commit."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events, self.got, self.headers = events, [], []

    @contextmanager
    def serving(self) -> Iterator[str]:
        app = FastAPI()

        @app.websocket("/v1/realtime")
        async def talk(websocket: WebSocket) -> None:
            self.headers.append(dict(websocket.headers))
            await websocket.accept()
            while True:
                event = json.loads(await websocket.receive_text())
                self.got.append(event)
                if event["type"] == "session.update":
                    for sent in self.events:
                        await websocket.send_text(json.dumps(sent))
                if event["type"] == "input_audio_buffer.commit":
                    await websocket.send_text(json.dumps({"type": "murmur.drained"}))

        with running(app) as url:
            yield url


ODD_EVENTS = [
    {"type": "murmur.speaker.named", "speaker": "S1", "name": "Bob", "score": 0.9123},
    {"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_9"},  # no lines
    {"type": "murmur.speaker.named", "speaker": "S2", "name": None, "score": None},
    {"type": "error"},
    {"type": "error", "error": {"code": "x"}},
    {"type": "error", "error": {"message": "the model is reloading"}},
]


def test_names_and_the_servers_odd_events_reach_the_caller_without_ending_the_stream():
    # catches: a name sent to the wrong speaker or without its score, a completed item never
    # committed (or without lines) killing the receiving thread, an error without a message lost
    names: list[tuple[str, str | None, float | None]] = []
    heard, peer = Heard(), Peer(ODD_EVENTS)
    with peer.serving() as url:
        client = heard.client(url, on_name=lambda *name: names.append(name))
        client.start()
        assert client.finish(timeout=10)
        plain = Heard().client(url)  # no `on_name`: names are not for it
        plain.start()
        assert plain.finish(timeout=10)
    assert names == [("S1", "Bob", 0.9123), ("S2", None, None)]
    assert heard.errors == ["the server reported an error"] * 2 + ["the model is reloading"]
    assert heard.lines == [] and client.lines == 0


def test_the_client_asks_for_16_khz_pcm_with_its_key_as_openai_shapes_the_request():
    # catches: a session.update a strict OpenAI-shaped server refuses (no `type`), a key sent when
    # there is none ("Bearer None")
    peer = Peer([])
    with peer.serving() as url:
        for key in ("k-0123456789", None):
            client = Heard().client(url, key=key, language="de")
            client.start()
            assert client.finish(timeout=10)
    keyed, keyless = peer.headers
    assert keyed["authorization"] == "Bearer k-0123456789" and "authorization" not in keyless
    audio = {"input": {"format": {"type": "audio/pcm", "rate": 16000}, "transcription": {"language": "de"}}}
    session = {"type": "transcription", "audio": audio, "murmur": {"speakers": False}}
    assert peer.got[0] == {"type": "session.update", "session": session} and peer.got[1] == {
        "type": "input_audio_buffer.commit"
    }
