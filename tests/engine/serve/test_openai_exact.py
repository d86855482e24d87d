"""`murmur serve` as OpenAI's own client sees it: each point where Murmur claims OpenAI's shape,
through the official `openai` client against a real server subprocess (bundled whisper tiny.en,
the embedded diarizer)."""

from __future__ import annotations

import json
import math
import socket
import time
from pathlib import Path

import pytest

from tests.engine.serve.conftest import KEY, ROOT, server, write_flac

openai = pytest.importorskip("openai")
HEARTBEAT = 0.5  # seconds between the spaces of a JSON answer still being computed


@pytest.fixture(scope="module")
def served():
    with server("--heartbeat-seconds", str(HEARTBEAT)) as s:
        yield s


@pytest.fixture(scope="module")
def seventy(tmp_path_factory) -> Path:
    """The demo meeting's first 70 s: three chunks, so a stream has several deltas."""
    from engine.audio.io import load_audio

    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000)
    return write_flac(tmp_path_factory.mktemp("seventy") / "seventy.flac", demo.samples[: 70 * 16000])


def client(url: str, key: str = "unused", **options) -> openai.OpenAI:
    return openai.OpenAI(api_key=key, base_url=url + "/v1", **{"max_retries": 0, "timeout": 300, **options})


def transcribe(url: str, path: Path, **fields):
    with path.open("rb") as f:
        return client(url).audio.transcriptions.create(model="whisper-1", file=f, **fields)


def refusal(call) -> openai.BadRequestError:
    with pytest.raises(openai.BadRequestError) as refused:
        call()
    return refused.value


def test_streamed_deltas_join_to_exactly_the_done_text_and_nothing_else_is_sent(served, seventy):
    events = list(transcribe(served.url, seventy, stream=True))
    deltas = [e.delta for e in events if e.type == "transcript.text.delta"]
    done = events[-1]
    assert len(deltas) >= 2 and done.type == "transcript.text.done"
    assert "".join(deltas) == done.text  # `text += event.delta`, as OpenAI documents
    assert {e.type for e in events} == {"transcript.text.delta", "transcript.text.done"}  # no phantoms
    assert done.usage.type == "duration" and done.usage.seconds == 70


def test_murmur_progress_events_come_only_to_a_client_that_asks(served, demo_pieces):
    events = list(transcribe(served.url, demo_pieces[0], stream=True, extra_body={"murmur_progress": "true"}))
    kinds = [e.type for e in events]
    assert kinds[0] == "murmur.job" and "murmur.progress" in kinds and kinds[-1] == "transcript.text.done"
    assert events[-1].to_dict()["murmur"]["utterances"]  # what Murmur's own client rebuilds from


def test_language_prompt_and_temperature_are_honoured_or_refused_by_name(served, demo_pieces):
    piece = demo_pieces[1]
    plain = transcribe(served.url, piece).text
    assert transcribe(served.url, piece, language="en").text == plain
    assert transcribe(served.url, piece, temperature=0.0).text == plain
    assert transcribe(served.url, piece, temperature=1.0).text != plain  # sampled, from a fixed seed
    assert transcribe(served.url, piece, prompt="um, uh, like, you know, um").text != plain
    german = refusal(lambda: transcribe(served.url, piece, language="de"))
    assert german.param == "language" and "English-only" in german.message
    assert refusal(lambda: transcribe(served.url, piece, temperature=1.5)).param == "temperature"
    assert refusal(lambda: transcribe(served.url, piece, include=["logprobs"])).param == "include"
    typo = refusal(lambda: transcribe(served.url, piece, extra_body={"langauge": "en"}))
    assert typo.param == "langauge" and typo.code == "unknown_parameter"


def test_every_json_body_carries_its_usage_in_seconds(served, demo_pieces):
    duration = 12.0
    assert transcribe(served.url, demo_pieces[2]).usage.seconds == math.ceil(duration)
    verbose = transcribe(served.url, demo_pieces[2], response_format="verbose_json")
    assert verbose.usage.type == "duration" and verbose.usage.seconds == math.ceil(duration)


def test_verbose_segments_hold_real_values_only_and_words_come_only_when_asked(served, demo_pieces):
    verbose = transcribe(served.url, demo_pieces[3], response_format="verbose_json")
    assert verbose.words is None and verbose.segments
    for segment in verbose.segments:
        fields = segment.to_dict()
        assert not {"avg_logprob", "no_speech_prob", "compression_ratio", "tokens", "seek"} & set(fields)
        assert fields["start"] == round(fields["start"], 3) and fields["end"] == round(fields["end"], 3)
        assert segment.text.startswith(" ")
    assert "".join(s.text for s in verbose.segments).strip() == verbose.text
    words = transcribe(served.url, demo_pieces[3], response_format="verbose_json",
                       timestamp_granularities=["word"])  # fmt: skip
    assert words.segments is None and words.words
    assert all(w.word and w.word[-1] not in ".,?!" for w in words.words)  # bare words, as OpenAI's
    refused = refusal(lambda: transcribe(served.url, demo_pieces[3], timestamp_granularities=["word"]))
    assert refused.param == "timestamp_granularities"  # json has no words, as OpenAI says


def test_stream_is_ignored_for_text_and_subtitles_which_carry_speakers_only_when_asked(served, demo_pieces):
    piece, api = demo_pieces[4], client(served.url)
    for fmt in ("srt", "vtt", "text"):
        with piece.open("rb") as f:
            raw = api.audio.transcriptions.with_raw_response.create(
                model="whisper-1", file=f, response_format=fmt, stream=True)  # fmt: skip
        assert raw.http_response.read().decode() == transcribe(served.url, piece, response_format=fmt), fmt
        assert raw.headers["content-type"].split(";")[0] != "text/event-stream"
    srt = transcribe(served.url, piece, response_format="srt")
    labelled = transcribe(served.url, piece, response_format="srt", extra_body={"speaker_labels": "true"})
    vtt = transcribe(served.url, piece, response_format="vtt", extra_body={"speaker_labels": "true"})
    assert "Speaker" not in srt and "Speaker 1:" in labelled and "<v Speaker 1>" in vtt
    assert [line for line in srt.splitlines() if "-->" in line] == [
        line for line in labelled.splitlines() if "-->" in line]  # fmt: skip


def test_models_have_one_stable_id_that_retrieve_finds(served):
    api = client(served.url)
    (model,) = api.models.list().data
    assert model.id == "whisper-tiny.en" and api.models.retrieve(model.id).id == model.id
    with pytest.raises(openai.NotFoundError) as missing:
        api.models.retrieve("whisper-1")
    assert missing.value.code == "model_not_found" and missing.value.param == "model"
    status, body = served.get("/v1/nothing-here")
    assert status == 404 and json.loads(body) == {"error": {
        "message": "Invalid URL (GET /v1/nothing-here)", "type": "invalid_request_error", "param": None,
        "code": None}}  # fmt: skip


def test_translations_on_an_english_only_model_are_a_clear_400(served, demo_pieces):
    with demo_pieces[5].open("rb") as f:
        refused = refusal(lambda: client(served.url).audio.translations.create(model="whisper-1", file=f))
    assert refused.param == "model" and "cannot translate" in refused.message
    assert json.loads(served.get("/health")[1])["jobs_active"] == 0


def test_a_long_answer_outlives_a_client_timeout_shorter_than_the_job_and_runs_once(served):
    before = served.metrics()
    api = client(served.url, timeout=2.0, max_retries=2)  # retries would upload it again
    with (ROOT / "resources/demo/meeting.flac").open("rb") as f:
        raw = api.audio.transcriptions.with_raw_response.create(model="whisper-1", file=f)
    after = served.metrics()
    answer = raw.parse()
    assert answer.text.startswith("I'd like to keep this meeting short") and answer.usage.seconds == 125
    heartbeats = len(raw.content) - len(raw.content.lstrip(b" "))
    assert heartbeats * HEARTBEAT > 2.0  # the job outlasted the client's timeout (else this proves nothing)
    assert after['murmur_jobs_total{state="done"}'] == before['murmur_jobs_total{state="done"}'] + 1
    assert after['murmur_jobs_total{state="cancelled"}'] == before['murmur_jobs_total{state="cancelled"}']


def test_a_client_leaving_during_the_heartbeats_cancels_its_job(served):
    before = served.metrics()['murmur_jobs_total{state="cancelled"}']
    audio = (ROOT / "resources/demo/meeting.flac").read_bytes()
    head = b'--b0\r\nContent-Disposition: form-data; name="file"; filename="m.flac"\r\n\r\n'
    body = head + audio + b"\r\n--b0--\r\n"
    host, port = served.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=60) as conn:
        request = (b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data;"
                   b" boundary=b0\r\nContent-Length: %d\r\n\r\n" % len(body))  # fmt: skip
        conn.sendall(request + body)
        received = b""
        while b" " not in received.partition(b"\r\n\r\n")[2]:  # the headers, then a heartbeat space
            received += conn.recv(1)
        assert received.startswith(b"HTTP/1.1 200 OK")
    deadline = time.monotonic() + 30
    while served.metrics()['murmur_jobs_total{state="cancelled"}'] == before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert served.metrics()['murmur_jobs_total{state="cancelled"}'] == before + 1


def test_a_keyed_server_answers_401_as_openai_and_can_open_metrics_to_prometheus(demo_pieces):
    with server("--diarizer", "none", "--api-key", KEY, "--metrics-public") as s:
        assert s.get("/metrics")[0] == 200  # no key: a Prometheus job scrapes it
        assert s.get("/v1/models")[0] == 401
        with pytest.raises(openai.AuthenticationError) as wrong, demo_pieces[0].open("rb") as f:
            client(s.url, "wrong-key-0123456789").audio.transcriptions.create(model="whisper-1", file=f)
        assert wrong.value.code == "invalid_api_key" and wrong.value.type == "invalid_request_error"
        assert client(s.url, KEY).models.list().data[0].id == "whisper-tiny.en"
