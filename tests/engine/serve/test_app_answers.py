"""What a client (and the operator's log) reads at the edges of `/v1/audio/transcriptions`: each
refusal word for word (status, message, param, type, code, headers), the declared-size allowance
to the byte, an upload that stalls or a client that leaves (driven through the ASGI interface a
real server calls, `receive` and `send`), the warnings header, and the pace of heartbeats.

The app runs on the known-transcript jobs of test_openai_shapes.py."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engine.pipeline import PipelineConfig
from engine.serve.app import model_id
from engine.serve.jobs import Job, JobOptions
from engine.speakers import SpeakerConfig
from tests.engine.serve.test_openai_shapes import TRANSCRIPT, InstantRegistry, app_client, error_of, post

pytest.importorskip("fastapi")

FORM = "multipart/form-data; boundary=b0"
HEAD = b'--b0\r\nContent-Disposition: form-data; name="file"; filename="talk.flac"\r\n\r\n'
TAIL = b"\r\n--b0--\r\n"
PROMPT = b'--b0\r\nContent-Disposition: form-data; name="prompt"\r\n\r\n'


@dataclass
class WarningRegistry(InstantRegistry):
    """`InstantRegistry` whose jobs carry `warnings`, keeping the path each job was given."""

    warnings: tuple[str, ...] = ()
    paths: list[Path] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)

    def submit(self, path: Path, duration: float, options: JobOptions) -> Job:
        self.paths.append(path)
        self.durations.append(duration)
        job = super().submit(path, duration, options)
        for message in self.warnings:
            job.warn(message)
        return job


@pytest.fixture
def audio(demo_pieces) -> bytes:
    return demo_pieces[1].read_bytes()


@dataclass
class PacedRegistry(InstantRegistry):
    """`InstantRegistry` whose jobs first report progress `steps` times, `pace` s apart."""

    steps: int = 30
    pace: float = 0.05

    def _run(self, job: Job, path: Path) -> None:
        for step in range(self.steps):
            job.emit({"type": "murmur.progress", "stage": "infer", "done": step, "total": self.steps})
            time.sleep(self.pace)
        super()._run(job, path)


def form(size: int) -> bytes:
    """A multipart body of exactly `size` bytes: one 'file' part padded with zeros."""
    return HEAD + b"\0" * (size - len(HEAD) - len(TAIL)) + TAIL


# ---- refusals before the body


def test_a_loading_server_says_so_with_a_retry_after_of_five_seconds(tmp_path, audio):
    client, _ = app_client(tmp_path, ready=False)
    answer = post(client, audio)
    assert answer.status_code == 503 and answer.headers["Retry-After"] == "5"
    assert error_of(answer) == {"message": "the model is still loading; try again shortly",
                                "type": "server_error", "param": None, "code": None}  # fmt: skip


def test_a_declared_size_is_refused_only_past_the_limit_plus_64_kib_for_the_forms_other_parts(tmp_path):
    client, server = app_client(tmp_path, config={"max_upload_mb": 0.01})
    edge = server.config.max_upload_bytes + 64 * 1024

    def refusal(size: int) -> dict[str, Any]:
        answer = client.post("/v1/audio/transcriptions", content=form(size), headers={"Content-Type": FORM})
        assert answer.status_code == 413 and answer.request.headers["content-length"] == str(size)
        return error_of(answer)

    read = refusal(edge)  # taken in, then refused as its file passes the limit while it streams
    assert read == {"message": "the file is larger than this server's limit of 0.00999928 MB",
                    "type": "invalid_request_error", "param": "file", "code": None}  # fmt: skip
    declared = refusal(edge + 1)  # refused on its Content-Length, before a byte is read
    assert declared == {"message": "the upload is larger than this server's limit of 0.01 MB",
                        "type": "invalid_request_error", "param": "file", "code": None}  # fmt: skip
    assert list(tmp_path.iterdir()) == []


# ---- refusals of the body


def test_a_file_that_is_not_audio_is_refused_by_the_name_the_client_gave_it(tmp_path):
    client, _ = app_client(tmp_path)

    def message(name: str) -> str:
        files = {"file": (name, b"ID3 not audio" * 9, "audio/mpeg")}
        answer = client.post("/v1/audio/transcriptions", files=files)
        refused = error_of(answer)
        assert answer.status_code == 400 and (refused["param"], refused["code"]) == ("file", "invalid_value")
        return refused["message"]

    assert message("talk.mp3") == "'talk.mp3' is not an audio file this server can read"
    assert message("") == "the file is not an audio file this server can read"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("body", "content_type", "param", "message"), [
    (b"{}", "application/json", "file", "send the audio as multipart/form-data with a 'file' field"),
    (b"", "", "file", "send the audio as multipart/form-data with a 'file' field"),
    (b"--b0\r\nbroken", FORM, "file", "the form has no 'file', or the file is empty"),
    (b"garbage", FORM, "file",
     "the form could not be read: Expected boundary character 45, got 103 at index 2"),
    (PROMPT + b"p" * 70000 + b"\r\n" + HEAD + b"x" + TAIL, FORM, "prompt", "form field 'prompt' is too long"),
])  # fmt: skip
def test_a_malformed_form_is_a_400_naming_the_part_at_fault(tmp_path, body, content_type, param, message):
    client, server = app_client(tmp_path)
    headers = {"Content-Type": content_type} if content_type else {}
    answer = client.post("/v1/audio/transcriptions", content=body, headers=headers)
    assert answer.status_code == 400 and error_of(answer) == {
        "message": message, "type": "invalid_request_error", "param": param, "code": None}  # fmt: skip
    assert server.registry.jobs == [] and list(tmp_path.iterdir()) == []


def test_a_job_gets_the_upload_in_the_servers_own_folder_and_its_length_as_decoded(tmp_path, audio):
    registry = WarningRegistry()
    client, server = app_client(tmp_path, registry=registry)
    assert post(client, audio).status_code == 200
    assert [p.parent for p in registry.paths] == [server.folder] and list(tmp_path.iterdir()) == []
    assert registry.durations == [pytest.approx(12.0, abs=0.05)]  # the 12-second piece, measured


def test_a_recording_over_the_length_limit_is_a_413_in_hours(tmp_path, audio):
    client, server = app_client(tmp_path, config={"max_audio_hours": 0.001})
    answer = post(client, audio)  # 12 s against 3.6 s
    assert answer.status_code == 413 and error_of(answer) == {
        "message": "the recording is longer than this server's limit of 0.001 hours",
        "type": "invalid_request_error", "param": "file", "code": None}  # fmt: skip
    assert server.registry.jobs == [] and list(tmp_path.iterdir()) == []


def test_what_the_model_cannot_do_is_refused_in_its_words_as_unsupported(tmp_path, audio):
    client, _ = app_client(tmp_path)  # the bundled tiny.en
    answer = post(client, audio, language="de")
    assert answer.status_code == 400 and error_of(answer) == {
        "message": "the model tiny.en is English-only: it cannot transcribe 'de'",
        "type": "invalid_request_error", "param": "language", "code": "unsupported_value"}  # fmt: skip


def test_jobs_over_the_registrys_own_limit_are_429_in_its_words_with_retry_after(tmp_path, audio):
    client, _ = app_client(tmp_path, registry=InstantRegistry(max_jobs=0))
    answer = post(client, audio)
    assert answer.status_code == 429 and answer.headers["Retry-After"] == "5"
    assert error_of(answer) == {"message": "the server is busy", "type": "requests", "param": None,
                                "code": "rate_limit_exceeded"}  # fmt: skip


def test_a_model_id_keeps_the_letters_at_the_ends_of_the_models_name():
    from engine.backends.whisper import WhisperBackend, WhisperConfig

    assert model_id(WhisperBackend(WhisperConfig(model="/srv/X-ray X/"))) == "whisper-X-ray-X"


def test_no_api_documentation_pages_are_served(tmp_path):
    client, _ = app_client(tmp_path)
    for path in ("/docs", "/redoc", "/openapi.json"):
        answer = client.get(path)
        assert answer.status_code == 404 and error_of(answer)["message"] == f"Invalid URL (GET {path})"


# ---- an upload that stalls, a client that leaves (the ASGI calls a real server makes)


def scope(client: tuple[str, int] | None) -> dict[str, Any]:
    headers = [(b"content-type", FORM.encode()), (b"host", b"testserver")]
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
            "scheme": "http", "path": "/v1/audio/transcriptions", "raw_path": b"/v1/audio/transcriptions",
            "query_string": b"", "root_path": "", "headers": headers, "client": client,
            "server": ("testserver", 80)}  # fmt: skip


def call(server_app: Any, body: list[bytes], then: str, client: tuple[str, int] | None = ("10.1.2.3", 5555),
         ) -> tuple[int, dict[str, Any] | None]:  # fmt: skip
    """Send `body` in pieces, then "stall" (nothing more, ever), "leave" (a disconnect before its
    end) or "finish" (its end, then a disconnect); the answer's status and JSON body."""
    pieces = [{"type": "http.request", "body": b, "more_body": then != "finish" or i + 1 < len(body)}
              for i, b in enumerate(body)]  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if pieces:
            return pieces.pop(0)
        if then == "stall":
            await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(asyncio.wait_for(server_app(scope(client), receive, send), 20))
    body_bytes = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body_bytes) if body_bytes else None


def test_an_upload_that_stalls_is_a_408_naming_the_file_and_nothing_is_kept(tmp_path):
    client, server = app_client(tmp_path, config={"client_timeout": 0.2})
    status, body = call(client.app, [HEAD, b"\1" * 1000], "stall")
    assert status == 408 and body == {"error": {"message": "the upload stalled: nothing arrived for 0.2 s",
                                                "type": "invalid_request_error", "param": "file",
                                                "code": None}}  # fmt: skip
    assert server.registry.jobs == [] and list(tmp_path.iterdir()) == []


def test_a_client_leaving_mid_upload_is_one_line_in_the_log_naming_it_and_nothing_is_kept(tmp_path, caplog):
    client, server = app_client(tmp_path)
    with caplog.at_level(logging.WARNING, logger="engine.serve.app"):
        status, body = call(client.app, [HEAD, b"\1" * 1000], "leave")
        call(client.app, [HEAD], "leave", client=None)
    assert status == 499 and body is not None  # what the server's access log shows for it
    assert body["error"]["message"] == "the client went away"
    assert [r.getMessage() for r in caplog.records if r.name == "engine.serve.app"] == [
        "a client (10.1.2.3:5555) went away during its upload; nothing was kept",
        "a client (unknown) went away during its upload; nothing was kept"]  # fmt: skip
    assert server.registry.jobs == [] and list(tmp_path.iterdir()) == []


def test_a_client_leaving_while_its_job_runs_is_a_499_and_cancels_the_job(tmp_path, audio):
    client, server = app_client(tmp_path, registry=InstantRegistry(delay=30))
    body = HEAD + audio + TAIL
    status, _ = call(client.app, [body[:5000], body[5000:]], "finish")
    assert status == 499
    deadline = time.monotonic() + 10
    while not server.registry.jobs[0].over and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.registry.counts["cancelled"] == 1


# ---- answers


def test_what_the_command_line_would_warn_about_comes_in_a_json_header_and_only_when_there_is_some(
        tmp_path, audio):  # fmt: skip
    warned = ["'a.flac' was cut short at 0:00:12", "it has 2 audio streams; the first was used"]
    client, _ = app_client(tmp_path, registry=WarningRegistry(warnings=tuple(warned)))
    answer = post(client, audio, response_format="text")
    assert answer.text == TRANSCRIPT.text + "\n" and json.loads(answer.headers["X-Murmur-Warnings"]) == warned
    quiet, _ = app_client(tmp_path)
    assert "X-Murmur-Warnings" not in post(quiet, audio).headers


def test_words_asked_alone_come_without_segments(tmp_path, audio):
    client, _ = app_client(tmp_path)
    body = post(client, audio, response_format="verbose_json", **{"timestamp_granularities[]": "word"}).json()
    assert "segments" not in body
    assert [w["word"] for w in body["words"]] == ["Hello", "there", "How", "are", "you"]


def test_a_diarized_stream_sends_each_segment_with_its_speaker_before_the_done_event(tmp_path, audio):
    client, _ = app_client(tmp_path)
    answer = post(client, audio, stream="true", response_format="diarized_json")
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert answer.headers["Cache-Control"] == "no-cache"  # no proxy holds the events back
    events = [json.loads(line[6:]) for line in answer.text.split("\n") if line.startswith("data: {")]
    assert [e["type"] for e in events[-3:]] == ["transcript.text.segment"] * 2 + ["transcript.text.done"]
    assert events[-3:-1] == [
        {"type": "transcript.text.segment", "id": "seg_0", "start": 0.3, "end": 2.0, "text": "Hello there.",
         "speaker": "A"},
        {"type": "transcript.text.segment", "id": "seg_1", "start": 2.5, "end": 4.25, "text": "How are you?",
         "speaker": "B"}]  # fmt: skip


@pytest.mark.parametrize(("fields", "diarizer"), [
    ({"response_format": "diarized_json", "diarize": "false"}, "embedded"),
    ({"response_format": "diarized_json"}, "none"),
])  # fmt: skip
def test_diarized_json_without_diarization_is_refused_before_a_job_starts(tmp_path, audio, fields, diarizer):
    config = PipelineConfig(speakers=SpeakerConfig(diarizer=diarizer))
    client, server = app_client(tmp_path, pipeline_config=config)
    refused = post(client, audio, **fields)
    assert refused.status_code == 400 and error_of(refused) == {
        "message": "diarized_json needs diarization, which is off for this request",
        "type": "invalid_request_error", "param": "response_format", "code": "invalid_value"}  # fmt: skip
    assert server.registry.jobs == [] and list(tmp_path.iterdir()) == []


def test_known_speakers_without_diarization_are_refused_by_their_references(tmp_path, audio):
    from tests.engine.serve.test_known_speaker_fields import clip

    client, server = app_client(tmp_path)
    fields = {"known_speaker_names[]": "Ann", "known_speaker_references[]": clip(3.0), "diarize": "false"}
    refused = post(client, audio, **fields)
    assert refused.status_code == 400 and error_of(refused) == {
        "message": "known_speaker_references needs diarization, which is off for this request",
        "type": "invalid_request_error", "param": "known_speaker_references",
        "code": "invalid_value"}  # fmt: skip
    assert server.registry.jobs == [] and list(tmp_path.iterdir()) == []


# ---- the pace of a waiting answer


def test_a_json_answer_ready_within_a_heartbeat_has_no_leading_space(tmp_path, audio):
    client, _ = app_client(tmp_path, config={"heartbeat_seconds": 1.0}, registry=InstantRegistry(delay=0.1))
    assert post(client, audio).content.startswith(b'{"text":')


def test_heartbeat_spaces_come_once_per_heartbeat_not_once_per_look_at_the_job(tmp_path, audio):
    client, _ = app_client(tmp_path, config={"heartbeat_seconds": 0.2}, registry=InstantRegistry(delay=1.2))
    began = time.monotonic()
    answer = post(client, audio)
    elapsed = time.monotonic() - began
    spaces = len(answer.content) - len(answer.content.lstrip(b" "))
    assert 2 <= spaces <= 1 + elapsed / 0.2  # each space waits a heartbeat after the one before
    assert answer.headers["content-type"] == "application/json"


def test_a_stream_sends_a_comment_line_once_per_quiet_heartbeat_and_none_while_it_has_news(tmp_path, audio):
    client, _ = app_client(tmp_path, config={"heartbeat_seconds": 0.2}, registry=InstantRegistry(delay=1.2))
    began = time.monotonic()
    body = post(client, audio, stream="true").text
    elapsed = time.monotonic() - began
    assert 2 <= body.count(": working\n\n") <= elapsed / 0.2 and body.endswith("data: [DONE]\n\n")
    assert {block for block in body.split("\n\n") if not block.startswith("data: ")} == {": working", ""}
    quick, _ = app_client(tmp_path, config={"heartbeat_seconds": 1.0}, registry=InstantRegistry(delay=0.1))
    assert ": working" not in post(quick, audio, stream="true").text


def test_a_stream_with_news_every_moment_sends_each_event_once_and_no_comment_line(tmp_path, audio):
    client, _ = app_client(tmp_path, config={"heartbeat_seconds": 0.5}, registry=PacedRegistry())
    body = post(client, audio, stream="true", murmur_progress="true").text
    data = [json.loads(line[6:]) for line in body.split("\n") if line.startswith("data: {")]
    progress = [e for e in data if e["type"] == "murmur.progress"]
    assert [e["done"] for e in progress] == [*range(30), 1]  # the last: the job's own step
    assert ": working" not in body and body.endswith("data: [DONE]\n\n")
