"""`WS /v1/realtime` of a real `murmur serve` subprocess (whisper tiny.en), driven with the
`websockets` client as a live-audio client would: speech in as PCM16, lines out, bad input closed."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import numpy as np
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from engine.audio.io import load_audio
from engine.evaluation.metrics import word_error
from engine.evaluation.normalize import MurmurNormalizer
from engine.live.session import LiveConfig
from engine.live.transcriber import LiveTranscriber
from engine.serve.realtime import IDLE_SECONDS
from tests.engine.serve.conftest import ROOT, server

RATE = 16000


@pytest.fixture(scope="module")
def served():
    with server("--diarizer", "none") as s:
        yield s


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    """20 s of the demo meeting, 16 kHz."""
    return load_audio(ROOT / "resources" / "demo" / "meeting.flac", RATE).samples[: 20 * RATE]


def open_session(url: str, rate: int = RATE) -> ClientConnection:
    socket = connect(url.replace("http://", "ws://") + "/v1/realtime", open_timeout=30, legacy=True)
    assert json.loads(socket.recv(timeout=30))["type"] == "transcription_session.created"
    audio = {"input": {"format": {"type": "audio/pcm", "rate": rate}}}
    socket.send(json.dumps({"type": "session.update", "session": {"type": "transcription", "audio": audio}}))
    return socket


def append(socket: ClientConnection, samples: np.ndarray) -> None:
    pcm = (np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes()
    socket.send(json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm).decode()}))


def events_until(socket: ClientConnection, kind: str, timeout: float = 120.0) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while not got or got[-1]["type"] != kind:
        got.append(json.loads(socket.recv(timeout=max(0.1, deadline - time.monotonic()))))
    return got


def closed_with(socket: ClientConnection) -> tuple[int | None, list[dict[str, Any]]]:
    """The close code the server ended the socket with, and the events before it."""
    events = []
    try:
        while True:
            events.append(json.loads(socket.recv(timeout=IDLE_SECONDS + 15)))
    except ConnectionClosed:
        return socket.close_code, events


def local_lines(samples: np.ndarray) -> list[str]:
    """The lines `murmur record --live` makes of the same audio in this process (its live settings:
    `LiveConfig`'s segments, cut at a pause while the decoder has spare time, greedy whisper)."""
    from engine.backends.whisper import WhisperBackend

    samples = (np.clip(samples, -1, 1) * 32767).astype("<i2").astype(np.float32) / 32768  # as sent
    lines: list[str] = []
    live = LiveConfig(speakers=False)
    transcriber = LiveTranscriber(
        live.decoder(WhisperBackend()), None, lambda line: lines.append(line.utterance.text)
    )
    vad = live.streaming_vad()
    for start in range(0, len(samples), RATE // 10):
        for segment in vad.push(samples[start : start + RATE // 10], live.may_cut(transcriber)):
            transcriber.submit(segment, samples[round(segment.start * RATE) : round(segment.end * RATE)])
    for segment in vad.flush():
        transcriber.submit(segment, samples[round(segment.start * RATE) : round(segment.end * RATE)])
    transcriber.drain()
    transcriber.close()
    return lines


def words(lines: list[str]) -> str:
    return " ".join(MurmurNormalizer()(" ".join(lines)).split())


def stream(socket: ClientConnection, speech: np.ndarray) -> list[dict[str, Any]]:
    """Send `speech` in 100 ms frames, as a microphone delivers them, commit, and the events until drained."""
    for start in range(0, len(speech), RATE // 10):
        append(socket, speech[start : start + RATE // 10])
    socket.send(json.dumps({"type": "input_audio_buffer.commit"}))
    return events_until(socket, "murmur.drained")


def test_speech_sent_as_it_is_captured_comes_back_as_the_lines_of_a_local_live_run(served, speech):
    # catches: the server closing segments by the offline detector's 500 ms (a line waits longer than
    # `murmur record --live`'s), decoding with the full beam, or dropping a line's words
    socket = open_session(served.url)
    events = stream(socket, speech)
    socket.close()
    committed = [e["item_id"] for e in events if e["type"] == "input_audio_buffer.committed"]
    completed = [e for e in events if e["type"].endswith("input_audio_transcription.completed")]
    assert [e["item_id"] for e in completed] == committed
    assert len(committed) >= 4  # 300 ms of silence closes 4 turns here (cuts add more); 500 ms closes 3
    for item in completed:
        deltas = [
            e["delta"] for e in events if e["type"].endswith(".delta") and e["item_id"] == item["item_id"]
        ]
        assert "".join(deltas) == item["transcript"]
    served = words([li["text"] for e in completed for li in e["lines"]])
    local = words(local_lines(speech))
    # pieces are cut where each decoder had time: the same words nearly, not exactly
    assert word_error(local, served).rate <= 0.1, (served, local)
    assert all(0 <= li["start"] < li["end"] <= 20.5 for e in completed for li in e["lines"])
    assert all("speaker" not in li for e in completed for li in e["lines"])  # not asked for


def test_a_session_that_asks_for_speakers_gets_a_provisional_speaker_on_every_line(served, speech):
    # catches: the `murmur.speakers` setting read from the wrong place or dropped (no speaker on any
    # line), or one speaker for everybody (the demo's first 20 s has two voices at least)
    socket = open_session(served.url)
    socket.send(
        json.dumps(
            {"type": "session.update", "session": {"type": "transcription", "murmur": {"speakers": True}}}
        )
    )
    events = stream(socket, speech)
    socket.send(json.dumps({"type": "session.update", "session": {"murmur": {"speakers": False}}}))
    refusal = events_until(socket, "error", timeout=30)[-1]
    socket.close()
    updated = [e for e in events if e["type"] == "session.updated"]
    assert updated[-1]["session"]["murmur"] == {"speakers": True}
    speakers = [li["speaker"] for e in events if e["type"].endswith(".completed") for li in e["lines"]]
    assert speakers and all(s.startswith("S") for s in speakers) and len(set(speakers)) >= 2
    assert refusal["error"]["param"] == "session.murmur.speakers"  # not after speech was heard


@pytest.mark.parametrize("frame", ["this is not json", b"\x00\x01binary", json.dumps(
    {"type": "input_audio_buffer.append", "audio": "%%% not base64"})])  # fmt: skip
def test_a_garbage_frame_is_an_error_and_closes_with_1007(served, frame):
    socket = open_session(served.url)
    socket.send(frame)
    code, events = closed_with(socket)
    assert code == 1007
    assert events[-1]["type"] == "error" and events[-1]["error"]["type"] == "invalid_request_error"


def test_an_unsupported_rate_names_the_parameter_and_closes_with_1003(served):
    socket = open_session(served.url, rate=12345)
    code, events = closed_with(socket)
    assert code == 1003
    assert events[-1]["error"]["param"] == "session.audio.input.format.rate"


def test_a_client_that_never_sends_is_closed_with_4408_and_its_session_freed(served):
    socket = connect(served.url.replace("http://", "ws://") + "/v1/realtime", open_timeout=30, legacy=True)
    assert served.metrics()["murmur_realtime_sessions"] == 1
    code, events = closed_with(socket)
    assert code == 4408 and events[-1]["error"]["code"] == "idle_timeout"
    assert served.metrics()["murmur_realtime_sessions"] == 0


def test_a_client_that_disconnects_mid_speech_frees_its_session_and_queued_work(served, speech):
    socket = open_session(served.url)
    for start in range(0, len(speech), RATE):
        append(socket, speech[start : start + RATE])
    events_until(socket, "input_audio_buffer.committed")  # speech is queued for decoding
    socket.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        metrics = served.metrics()
        if metrics["murmur_realtime_sessions"] == 0 and metrics["murmur_queue_jobs"] == 0:
            break
        time.sleep(0.2)
    assert metrics["murmur_realtime_sessions"] == 0
    assert metrics["murmur_queue_jobs"] == 0  # nothing of it is left in the shared batch


def test_a_live_stream_outlives_the_deadline_for_silent_http_clients(speech):
    # catches: the connection guard's deadline for a request head left running after the upgrade
    # to a WebSocket (every live stream was cut after `--client-timeout`, 30 s by default)
    with server("--diarizer", "none", "--client-timeout", "1") as short:
        socket = open_session(short.url)
        for start in range(0, 3 * RATE, RATE // 10):  # 3 s at a microphone's pace
            append(socket, speech[start : start + RATE // 10])
            time.sleep(0.1)
        socket.send(json.dumps({"type": "input_audio_buffer.commit"}))
        events = events_until(socket, "murmur.drained")
        socket.close()
    assert any(e["type"].endswith("input_audio_transcription.completed") for e in events)
