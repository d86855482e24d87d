"""`murmur serve` with the bundled whisper tiny.en, used through the official `openai` client and
through Murmur's own client, as real subprocesses on loopback ports."""

from __future__ import annotations

import contextlib
import http.client
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.errors import Cancelled
from engine.export import render
from engine.pipeline import Pipeline, PipelineConfig
from engine.remote.client import RemoteError
from engine.remote.pipeline import RemotePipeline
from engine.serve.formats import bare_word
from engine.speakers import SpeakerConfig
from tests.engine.serve.conftest import ENV, KEY, ROOT, server, write_flac

openai = pytest.importorskip("openai")
NO_SPEAKERS = PipelineConfig(speakers=SpeakerConfig(diarizer="none"))


@pytest.fixture(scope="module")
def served():
    with server("--diarizer", "none") as s:
        yield s


@pytest.fixture(scope="module")
def local(demo_pieces):
    pipeline = Pipeline.create("whisper", NO_SPEAKERS)
    return {path: pipeline.run(path) for path in demo_pieces}


def client(url: str, key: str = "unused") -> openai.OpenAI:
    return openai.OpenAI(api_key=key, base_url=url + "/v1", max_retries=0, timeout=300)


def test_eight_concurrent_clients_get_the_transcripts_of_local_runs(served, demo_pieces, local):
    def through_openai(path: Path) -> str:
        with path.open("rb") as f:
            return client(served.url).audio.transcriptions.create(model="whisper-1", file=f).text

    def through_murmur(path: Path) -> str:
        return RemotePipeline(served.url).run(path).text

    with ThreadPoolExecutor(8) as pool:
        ways = [through_openai, through_murmur] * 4
        futures = [pool.submit(way, p) for way, p in zip(ways, demo_pieces, strict=True)]
        texts = [f.result() for f in futures]
    assert texts == [local[p].text for p in demo_pieces]
    assert all(texts)


def test_every_response_format_matches_the_local_export(served, demo_pieces, local):
    path = demo_pieces[1]
    api = client(served.url)
    for fmt in ("srt", "vtt", "text"):
        with path.open("rb") as f:
            body = api.audio.transcriptions.create(model="whisper-1", file=f, response_format=fmt)
        expected = local[path].text + "\n" if fmt == "text" else render(local[path], fmt).decode()
        assert body == expected, fmt
    with path.open("rb") as f:
        verbose = api.audio.transcriptions.create(
            model="whisper-1", file=f, response_format="verbose_json",
            timestamp_granularities=["word", "segment"],
        )  # fmt: skip
    utterances = local[path].utterances
    assert [s.text for s in verbose.segments] == [f" {u.text}" for u in utterances]
    assert [s.start for s in verbose.segments] == [round(u.start, 3) for u in utterances]
    assert [w.word for w in verbose.words] == [bare_word(w.text) for u in utterances for w in u.words]
    assert verbose.duration == pytest.approx(12.0, abs=0.01)


def test_streamed_events_arrive_in_order_and_their_lines_are_the_final_transcript(served, demo_pieces, local):
    path = demo_pieces[2]
    with path.open("rb") as f:
        stream = client(served.url).audio.transcriptions.create(
            model="whisper-1", file=f, stream=True, extra_body={"murmur_progress": "true"})  # fmt: skip
        events = [e.to_dict() if hasattr(e, "to_dict") else dict(e) for e in stream]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "murmur.job" and kinds[-1] == "transcript.text.done"
    stages = [e["stage"] for e in events if e["type"] == "murmur.progress"]
    order = ["load", "vad", "chunk", "infer", "speakers", "stitch"]
    assert [order.index(s) for s in stages] == sorted(order.index(s) for s in stages)  # stages never go back
    first_line = kinds.index("transcript.text.delta")
    assert "chunk" in stages[: first_line] and kinds.count("transcript.text.delta") >= 1
    streamed = " ".join(e["delta"] for e in events if e["type"] == "transcript.text.delta")
    assert streamed.split() == events[-1]["text"].split() == local[path].text.split()
    assert any(e.get("eta_seconds") is not None for e in events if e["type"] == "murmur.progress")


def post(url: str, body: bytes, content_type: str, key: str | None = None) -> tuple[int, Any, dict]:
    """POST `body` with its length; the status, headers and JSON answered. The server may answer
    (413) and close before the body is sent, as any HTTP server may: the answer is still read."""
    host, port = url.split("//")[1].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=120)
    headers = {"Content-Type": content_type, "Content-Length": str(len(body))}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    connection.putrequest("POST", "/v1/audio/transcriptions")
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders()
    with contextlib.suppress(OSError):
        connection.send(body)
    response = connection.getresponse()
    status, answer = response.status, json.loads(response.read() or b"{}")
    connection.close()
    return status, response.headers, answer


def chunked_post(url: str, body: bytes, content_type: str, key: str) -> int:
    """POST `body` with chunked transfer encoding (no Content-Length); the status answered."""
    host, port = url.split("//")[1].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    connection.putrequest("POST", "/v1/audio/transcriptions")
    for name, value in (("Content-Type", content_type), ("Authorization", f"Bearer {key}"),
                        ("Transfer-Encoding", "chunked")):  # fmt: skip
        connection.putheader(name, value)
    connection.endheaders()
    with contextlib.suppress(OSError):  # the server may answer and close before the body ends
        for start in range(0, len(body), 16384):
            piece = body[start : start + 16384]
            connection.send(b"%x\r\n%s\r\n" % (len(piece), piece))
        connection.send(b"0\r\n\r\n")
    status = connection.getresponse().status
    connection.close()
    return status


def form(file: bytes, **fields: str) -> tuple[bytes, str]:
    head = '--b0\r\nContent-Disposition: form-data; name="{}"{}\r\n\r\n'
    parts = [head.format(k, "").encode() + v.encode() + b"\r\n" for k, v in fields.items()]
    parts.append(head.format("file", '; filename="x.flac"').encode() + file + b"\r\n")
    return b"".join(parts) + b"--b0--\r\n", "multipart/form-data; boundary=b0"


def test_each_bad_request_gets_its_status_and_a_json_error(served, demo_pieces, tmp_path):
    audio = demo_pieces[0].read_bytes()
    cases = {
        "not audio": (form(b"this is not audio at all"), 400),
        "bad format": (form(audio, response_format="docx"), 400),
        "bad granularity": (form(audio, timestamp_granularities="char"), 400),
        "bad speaker count": (form(audio, num_speakers="many"), 400),
        "not a form": ((b"{}", "application/json"), 400),
        "no file": ((b"--b0\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nx\r\n--b0--\r\n",
                     "multipart/form-data; boundary=b0"), 400),
    }  # fmt: skip
    for name, ((body, kind), status) in cases.items():
        got, _, error = post(served.url, body, kind)
        assert got == status, name
        assert set(error["error"]) == {"message", "type", "param", "code"} and error["error"]["message"], name
    assert served.get("/nope")[0] == 404
    assert json.loads(served.get("/health")[1])["jobs_active"] == 0  # nothing left behind


def test_a_strict_server_refuses_keys_sizes_lengths_and_a_full_queue(demo_pieces, tmp_path):
    noise = np.random.default_rng(0).uniform(-0.5, 0.5, 16000 * 20).astype(np.float32)
    big = write_flac(tmp_path / "big.flac", noise).read_bytes()  # ~0.6 MB of noise
    long = write_flac(tmp_path / "long.flac", np.zeros(16000 * 60, np.float32)).read_bytes()  # a minute
    flags = ("--api-key", KEY, "--max-upload-mb", "0.5", "--max-audio-hours", "0.01",
             "--max-queued-jobs", "1")  # fmt: skip
    with server("--diarizer", "none", *flags) as s:
        audio = demo_pieces[0].read_bytes()
        assert post(s.url, *form(audio))[0] == 401
        assert post(s.url, *form(audio), key="wrong-key-0123456789")[0] == 401
        assert s.get("/metrics")[0] == 401 and s.get("/v1/models")[0] == 401
        assert post(s.url, *form(big), key=KEY)[0] == 413
        assert chunked_post(s.url, *form(big), key=KEY) == 413  # no length given: capped while it streams
        assert post(s.url, *form(long), key=KEY)[0] == 413
        assert json.loads(s.get("/v1/models", KEY)[1])["data"][0]["id"] == "whisper-tiny.en"
        assert json.loads(s.get("/health")[1])["model"] is None  # health is open, the model name is not
        assert json.loads(s.get("/health", KEY)[1])["model"] == "faster-whisper tiny.en"
        with pytest.raises(openai.AuthenticationError), demo_pieces[0].open("rb") as f:
            client(s.url, "wrong-key-0123456789").audio.transcriptions.create(model="whisper-1", file=f)
        first = threading.Thread(target=lambda: post(s.url, *form(audio), key=KEY))
        first.start()
        while json.loads(s.get("/health")[1])["jobs_active"] == 0:
            time.sleep(0.05)
        status, headers, error = post(s.url, *form(audio), key=KEY)
        first.join()
        assert status == 429 and int(headers["Retry-After"]) > 0
        assert error["error"]["type"] == "requests" and error["error"]["code"] == "rate_limit_exceeded"
        assert post(s.url, *form(audio), key=KEY)[0] == 200  # room again once the first is done
    assert s.left == ()  # the upload folder goes with the server


def murmur_serve(*flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", "serve", *flags], capture_output=True, text=True,
                          env=ENV, cwd=ROOT, timeout=300)  # fmt: skip


def test_a_network_address_without_a_key_is_refused_in_one_line():
    result = murmur_serve("--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "murmur: error: refusing to listen on 0.0.0.0 without an API key: anyone who can reach it could use "
        "this GPU; set MURMUR_API_KEY (or give --api-key), or bind 127.0.0.1"
    ]


def test_a_model_that_cannot_load_stops_the_server_in_one_line(tmp_path):
    result = murmur_serve("--backend", "whisper", "--model", str(tmp_path / "missing"), "--port", "0")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("murmur: error: ") and "does not exist" in lines[0]


def test_a_cancelled_client_leaves_the_server_serving_others(served, demo_pieces, local):
    cancel = threading.Event()
    remote = RemotePipeline(served.url)
    with pytest.raises(Cancelled):
        remote.run(demo_pieces[3], lambda p: cancel.set() if p.stage.value == "vad" else None, cancel)
    deadline = time.monotonic() + 30
    while json.loads(served.get("/health")[1])["jobs_active"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert json.loads(served.get("/health")[1])["jobs_active"] == 0
    assert served.metrics()['murmur_jobs_total{state="cancelled"}'] >= 1
    assert RemotePipeline(served.url).run(demo_pieces[4]).text == local[demo_pieces[4]].text


@pytest.mark.slow
def test_killing_the_server_mid_job_is_a_clear_error_that_keeps_the_lines_received(tmp_path):
    from engine.audio.io import load_audio

    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000)
    path = write_flac(tmp_path / "meeting.flac", demo.samples[: 70 * 16000])  # three chunks
    with server("--diarizer", "none", "--batch-size", "1") as s:  # one chunk at a time
        def kill_after_first_lines(progress):
            if progress.partial is not None and s.process.poll() is None:
                s.process.kill()

        with pytest.raises(RemoteError) as failure:
            RemotePipeline(s.url).run(path, kill_after_first_lines)
    assert "Murmur server" in str(failure.value) and s.url.split("//")[1] in str(failure.value)
    assert failure.value.lines and all(line["text"] for line in failure.value.lines)


def test_uploads_are_deleted_after_each_job_and_the_folder_when_the_server_stops(served, demo_pieces):
    (folder,) = served.tmp.glob("murmur-serve-*")
    with demo_pieces[5].open("rb") as f:
        client(served.url).audio.transcriptions.create(model="whisper-1", file=f, response_format="text")
    post(served.url, *form(b"not audio"))
    assert list(folder.iterdir()) == []
