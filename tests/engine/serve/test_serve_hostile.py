"""`murmur serve` against careless and hostile clients, as real subprocesses on loopback ports:
recordings that state no length or a wrong one, silent and half-sent connections, more
connections than it takes, files the CLI would warn about, clients that leave, two Ctrl-Cs."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.pipeline import Pipeline, PipelineConfig
from engine.remote.client import RemoteClient
from engine.speakers import SpeakerConfig
from tests.engine.serve.conftest import ENV, KEY, ROOT, Served, server, stop, write_flac

NO_SPEAKERS = PipelineConfig(speakers=SpeakerConfig(diarizer="none"))


# what a client sends, byte by byte
def connect(served: Served) -> socket.socket:
    host, port = served.url.split("//")[1].split(":")
    return socket.create_connection((host, int(port)), timeout=300)  # a loaded machine decodes slowly


def form(file: bytes, filename: str = "x.flac", **fields: str) -> tuple[bytes, bytes]:
    """(the multipart text before the file's last byte, the rest): a client stopping between the
    two has sent all but the end of its upload."""
    head = '--b0\r\nContent-Disposition: form-data; name="{}"{}\r\n\r\n'
    parts = [head.format(k, "").encode() + v.encode() + b"\r\n" for k, v in fields.items()]
    parts.append(head.format("file", f'; filename="{filename}"').encode() + file)
    return b"".join(parts), b"\r\n--b0--\r\n"


def request_head(length: int, key: str | None = None, scheme: str = "Bearer") -> bytes:
    lines = ["POST /v1/audio/transcriptions HTTP/1.1", "Host: murmur", f"Content-Length: {length}",
             "Content-Type: multipart/form-data; boundary=b0"]  # fmt: skip
    if key:
        lines.append(f"Authorization: {scheme} {key}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def send(served: Served, file: bytes, filename: str = "x.flac", key: str | None = None,
         **fields: str) -> tuple[int, dict[str, str], bytes]:  # fmt: skip
    """A whole upload; the status, headers and body answered."""
    first, rest = form(file, filename, **fields)
    sock = connect(served)
    try:
        sock.sendall(request_head(len(first) + len(rest), key) + first + rest)
        return answer(sock)
    finally:
        sock.close()


def half_sent(served: Served, file: bytes, key: str | None = None) -> socket.socket:
    """A connection whose upload stops just before its end (the caller closes it)."""
    first, rest = form(file)
    sock = connect(served)
    sock.sendall(request_head(len(first) + len(rest), key) + first)
    return sock


def answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response.status, dict(response.getheaders()), response.read()


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closes `sock` (waiting up to its timeout; any answer is read first)."""
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def health(served: Served) -> dict:
    return json.loads(served.get("/health")[1])


def wait_for(condition, what: str, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def uploads(served: Served) -> list[Path]:
    """The files in the server's upload folder now."""
    return [p for folder in served.tmp.glob("murmur-serve-*") for p in folder.iterdir()]


def peak_rss_mb(served: Served) -> float:
    """The server process's peak resident memory so far (VmHWM), from outside it."""
    for line in Path(f"/proc/{served.process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def ffmpeg(*args: str) -> bytes:
    return subprocess.run(["ffmpeg", "-v", "error", *args], check=True, capture_output=True).stdout


# files
def opus_minute(container: str) -> bytes:
    """A minute of tone as Opus, written to a pipe."""
    return ffmpeg("-f", "lavfi", "-i", "sine=frequency=300:sample_rate=48000:duration=60", "-ac", "1",
                  "-c:a", "libopus", "-b:a", "6k", "-f", container, "pipe:1")  # fmt: skip


@pytest.fixture(scope="module")
def headerless_webm(tmp_path_factory) -> bytes:
    """Two hours of Opus in WebM written to a pipe, as a browser's recorder does: no length stated."""
    folder = tmp_path_factory.mktemp("webm")
    minute = folder / "minute.webm"
    minute.write_bytes(opus_minute("webm"))
    data = ffmpeg("-stream_loop", "119", "-i", str(minute), "-c", "copy", "-f", "webm", "pipe:1")
    probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                            "-"], input=data, capture_output=True, check=True)  # fmt: skip
    assert probe.stdout.strip() == b"N/A"  # really no length in its header
    return data


@pytest.fixture(scope="module")
def chained_ogg(tmp_path_factory) -> bytes:
    """Two 40-minute Opus files joined byte-wise: 80 minutes, the header's word is one link's."""
    folder = tmp_path_factory.mktemp("ogg")
    minute = folder / "minute.ogg"
    minute.write_bytes(opus_minute("ogg"))
    link = ffmpeg("-stream_loop", "39", "-i", str(minute), "-c", "copy", "-f", "ogg", "pipe:1")
    return link + link


@pytest.fixture(scope="module")
def speech(tmp_path_factory) -> Path:
    from engine.audio.io import load_audio

    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000)
    return write_flac(tmp_path_factory.mktemp("speech") / "speech.flac", demo.samples[: 12 * 16000])


@pytest.fixture(scope="module")
def local(speech) -> str:
    return Pipeline.create("whisper", NO_SPEAKERS).run(speech).text


# a server with a one-hour limit and a two-second patience
@pytest.fixture(scope="module")
def limited():
    with server("--diarizer", "none", "--max-audio-hours", "1", "--client-timeout", "2") as s:
        yield s
    assert s.left == ()


def test_a_two_hour_webm_stating_no_length_gets_413_in_bounded_memory(limited, headerless_webm):
    before = peak_rss_mb(limited)
    status, _, body = send(limited, headerless_webm, "meeting.webm")
    assert status == 413, body
    message = json.loads(body)["error"]["message"]
    assert message == "the recording is longer than this server's limit of 1 hours"
    grown = peak_rss_mb(limited) - before
    assert grown < 150, f"the server grew by {grown:.0f} MB measuring a 6 MB file"  # 2 h at 16 kHz: 460 MB
    assert health(limited)["jobs_active"] == 0
    assert uploads(limited) == []


def test_a_chained_ogg_longer_than_the_limit_is_refused(limited, chained_ogg):
    status, _, body = send(limited, chained_ogg, "call.ogg")
    assert status == 413, body


def test_silent_and_half_sent_connections_are_closed_and_leave_nothing(limited, speech):
    silent = connect(limited)
    dripping = connect(limited)
    dripping.sendall(b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: murmur\r\n")  # never finished
    stalled = half_sent(limited, speech.read_bytes())
    assert closed_by_server(silent) and closed_by_server(dripping)
    status, _, body = answer(stalled)
    assert status == 408 and "stalled" in json.loads(body)["error"]["message"]
    for sock in (silent, dripping, stalled):
        sock.close()
    wait_for(lambda: health(limited)["jobs_active"] == 0, "the stalled upload's place is free")
    assert uploads(limited) == []


def test_a_client_leaving_mid_upload_is_one_line_in_the_log_and_leaves_no_file(limited, speech):
    sock = half_sent(limited, speech.read_bytes())
    wait_for(lambda: any(uploads(limited)), "the upload's file exists")
    sock.close()
    wait_for(lambda: "went away" in limited.printed(), "the server notices")
    wait_for(lambda: not any(uploads(limited)), "the partial file is deleted")
    log = limited.printed()
    assert "Traceback" not in log
    assert len([line for line in log.splitlines() if "went away" in line]) == 1


def test_warnings_about_the_file_reach_the_client_in_its_own_words(limited, tmp_path):
    two = tmp_path / "two.mka"
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=300:duration=3", "-f", "lavfi", "-i",
           "sine=frequency=500:duration=3", "-map", "0", "-map", "1", "-c:a", "flac", str(two))  # fmt: skip
    status, headers, body = send(limited, two.read_bytes(), "interview.mka", response_format="verbose_json")
    assert status == 200, body
    (warning,) = json.loads(headers["x-murmur-warnings"])
    assert warning.startswith("'interview.mka' has 2 audio streams: #0 (1 ch, 44100 Hz")
    cut = tmp_path / "cut.wav"
    sf.write(cut, np.zeros(16000 * 20, np.float32), 16000, subtype="PCM_16")
    cut.write_bytes(cut.read_bytes()[: 44 + 2 * 16000 * 5])  # the header says 20 s, 5 s are there
    status, _, body = send(limited, cut.read_bytes(), "call.wav", stream="true",
                           murmur_progress="true")  # Murmur's own events are asked for
    assert status == 200, body
    events = [json.loads(line[6:]) for line in body.decode().splitlines() if line.startswith("data: {")]
    assert {"type": "murmur.warning", "message": "'call.wav' ends before its header says: only 0:00:05 of "
            "0:00:20 could be read (the rest is missing)"} in events  # as the CLI says it  # fmt: skip
    assert events[-1]["type"] == "transcript.text.done"
    sf.write(cut, np.zeros(16000 * 20, np.float32), 16000, subtype="PCM_16")  # whole again
    assert "x-murmur-warnings" not in send(limited, cut.read_bytes(), "whole.wav")[1]


def test_the_transcript_never_shows_the_servers_upload_path_and_bad_audio_is_one_sentence(limited, speech):
    status, _, body = send(limited, speech.read_bytes(), "board meeting.flac", response_format="verbose_json")
    assert status == 200, body
    verbose = json.loads(body)
    assert verbose["murmur"]["source"] == "board meeting.flac"
    assert b"upload-" not in body and b"murmur-serve" not in body and str(limited.tmp).encode() not in body
    status, _, body = send(limited, b"\x1aE\xdf\xa3" + bytes(range(256)) * 40, "notes.webm")
    assert status == 400
    assert json.loads(body)["error"]["message"] == "'notes.webm' is not an audio file this server can read"


# a server taking one job, four connections, its key from the environment
@pytest.fixture(scope="module")
def single():
    flags = ("--diarizer", "none", "--max-queued-jobs", "1", "--max-connections", "4")
    with server(*flags, env={"MURMUR_API_KEY": KEY}) as s:
        yield s
    assert s.left == ()


def test_an_upload_still_arriving_takes_the_only_place_and_the_next_gets_429(single, speech):
    first = half_sent(single, speech.read_bytes(), KEY)
    wait_for(lambda: any(uploads(single)), "the first upload arrives")
    status, headers, body = send(single, speech.read_bytes(), key=KEY)  # exactly at the limit
    assert status == 429 and int(headers["retry-after"]) > 0, body
    first.sendall(form(b"")[1])  # the rest of the first upload
    assert answer(first)[0] == 200
    first.close()
    wait_for(lambda: health(single)["jobs_active"] == 0, "its job is counted out", 30)
    assert send(single, speech.read_bytes(), key=KEY)[0] == 200  # so there is room again


def test_a_lower_case_bearer_scheme_is_accepted(single):
    sock = connect(single)
    sock.sendall(f"GET /v1/models HTTP/1.1\r\nHost: murmur\r\nAuthorization: bearer {KEY}\r\n\r\n".encode())
    assert answer(sock)[0] == 200
    sock.close()


def test_the_remote_client_waits_as_retry_after_says_and_then_succeeds(single, speech, local):
    holder = half_sent(single, speech.read_bytes(), KEY)
    wait_for(lambda: any(uploads(single)), "the place is taken")
    said: list[str] = []
    result: list = []

    def run() -> None:
        from engine.audio.io import load_audio

        recording = load_audio(speech, 16000)
        result.append(RemoteClient(single.url, KEY).transcribe(recording, lambda p: said.append(p.detail)))

    thread = threading.Thread(target=run)
    thread.start()
    wait_for(lambda: "the server is busy: trying again in 5 s" in said, "the client is told to wait")
    holder.close()  # the place frees while the client waits
    thread.join(timeout=300)
    assert result and result[0].text == local


def test_connections_beyond_the_limit_get_503_and_the_others_keep_working(single):
    held = [connect(single) for _ in range(4)]
    time.sleep(0.5)  # let the server take all four before the fifth knocks
    fifth = connect(single)
    status, headers, _ = answer(fifth)
    assert status == 503 and int(headers["retry-after"]) > 0
    fifth.close()
    held[-1].sendall(b"GET /health HTTP/1.1\r\nHost: murmur\r\n\r\n")
    assert answer(held[-1])[0] == 200  # the fourth of four is served
    for sock in held:
        sock.close()


def test_an_abandoned_request_cancels_its_job(single, tmp_path):
    from engine.audio.io import load_audio

    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000)
    long = write_flac(tmp_path / "long.flac", demo.samples[: 90 * 16000])
    before = single.metrics(KEY)
    first, rest = form(long.read_bytes())
    sock = connect(single)
    sock.sendall(request_head(len(first) + len(rest), KEY) + first + rest)
    wait_for(lambda: health(single)["jobs_active"] == 1, "the job starts")
    sock.close()  # the client gives up without a word
    wait_for(lambda: health(single)["jobs_active"] == 0, "the job ends")
    after = single.metrics(KEY)
    cancelled = 'murmur_jobs_total{state="cancelled"}'
    assert after[cancelled] == before[cancelled] + 1
    assert after['murmur_jobs_total{state="done"}'] == before['murmur_jobs_total{state="done"}']


def test_two_ctrl_c_during_a_job_leave_no_upload_on_disk(speech, tmp_path):
    from engine.audio.io import load_audio

    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000)
    long = write_flac(tmp_path / "long.flac", demo.samples[: 90 * 16000])
    with server("--diarizer", "none") as s:
        first, rest = form(long.read_bytes())
        sock = connect(s)
        sock.sendall(request_head(len(first) + len(rest)) + first + rest)
        wait_for(lambda: health(s)["jobs_active"] == 1, "the job starts")
        stop(s, (signal.SIGINT, signal.SIGINT))
        sock.close()
    assert s.left == ()


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_a_limit_that_is_not_a_positive_number_is_refused_in_one_line(value):
    command = [sys.executable, "-m", "engine", "serve", "--max-audio-hours", value, "--port", "0"]
    result = subprocess.run(command, capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"murmur: error: --max-audio-hours must be a positive number, got {float(value):g}"
    ]
