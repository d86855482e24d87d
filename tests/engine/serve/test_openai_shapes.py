"""The server's OpenAI shapes, in process: the app on FastAPI's TestClient over jobs that finish
with a known transcript, and the pure pieces (bodies, the client's stream, form fields). The same
behaviours through the `openai` client and a real server are in test_openai_exact.py."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engine.backends.whisper import WhisperBackend
from engine.pipeline import PipelineConfig
from engine.serve.config import ServeConfig
from engine.serve.events import ClientStream
from engine.serve.formats import bare_word, render_response, verbose
from engine.serve.jobs import Job, JobOptions, QueueFull
from engine.serve.params import transcription_request, translation_request
from engine.serve.server import Places
from engine.types import DecodeChoices, Speaker, Transcript, Utterance, Word

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from engine.serve.app import create_app, model_id
from engine.serve.decoding import Refused, job_backend

KEY = "test-key-0123456789"
TRANSCRIPT = Transcript(
    utterances=(
        Utterance(0.1 + 0.2, 2.0000000001, "Hello there.", "S1",
                  (Word(0.30000000000000004, 0.9, "Hello"), Word(1.0, 2.0, "there."))),
        Utterance(2.50049, 4.25049, "How are you?", "S2", (
            Word(2.50049, 3.00049, "How"), Word(3.1, 3.5, "are"), Word(3.6, 4.25, "you?"))),
    ),
    speakers=(Speaker("S1", "Alice"), Speaker("S2", "Bob")),
    duration=12.20049, model="faster-whisper tiny.en", language="en",
)  # fmt: skip


@dataclass
class InstantRegistry:
    """Jobs that end with `TRANSCRIPT` (or `failure`) after `delay` s; keeps each job's options."""

    delay: float = 0.0
    failure: str | None = None
    max_jobs: int = 4
    options: list[JobOptions] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {"done": 0, "failed": 0, "cancelled": 0})
    audio_seconds: float = 0.0
    jobs: list[Job] = field(default_factory=list)

    @property
    def active(self) -> int:
        return sum(not j.over for j in self.jobs)

    def submit(self, path: Path, duration: float, options: JobOptions) -> Job:
        if self.active >= self.max_jobs:
            raise QueueFull("the server is busy")
        job = Job(f"job-{len(self.jobs)}", duration)
        self.jobs.append(job)
        self.options.append(options)
        threading.Thread(target=self._run, args=(job, path), daemon=True).start()
        return job

    def _run(self, job: Job, path: Path) -> None:
        deadline = time.monotonic() + self.delay
        while time.monotonic() < deadline and not job.cancel_event.is_set():
            time.sleep(0.01)
        path.unlink(missing_ok=True)
        if job.cancel_event.is_set():
            self.counts["cancelled"] += 1
            job.end("cancelled", {"type": "error", "error": {"message": "cancelled", "type": "cancelled"}})
        elif self.failure:
            job.end("failed", {"type": "error", "error": {"message": self.failure, "type": "server_error"}})
        else:
            job.emit({"type": "murmur.progress", "stage": "infer", "done": 1, "total": 1})
            job.emit({"type": "transcript.text.delta", "lines": [{"text": "Hello there."}, {"text": ""}]})
            job.emit({"type": "transcript.text.delta", "lines": [{"text": "How are you?"}]})
            job.transcript = TRANSCRIPT
            job.end("done", {"type": "transcript.text.done", "text": TRANSCRIPT.text, **verbose(TRANSCRIPT)})
            self.counts["done"] += 1


@dataclass
class AppServer:
    """What the app reads of a `Server`: its settings, backend, jobs and upload folder."""

    folder: Path
    config: ServeConfig = field(default_factory=ServeConfig)
    registry: InstantRegistry = field(default_factory=InstantRegistry)
    backend: Any = field(default_factory=WhisperBackend)  # the bundled tiny.en, never loaded here
    pipeline_config: PipelineConfig = field(default_factory=PipelineConfig)  # its diarizer setting
    ready: bool = True
    shared: Any = None
    started: float = 0.0
    places: Places = field(init=False)

    def __post_init__(self) -> None:
        self.places = Places(self.registry, self.config.max_queued_jobs)  # type: ignore[arg-type]

    @property
    def model(self) -> str:
        return self.backend.describe()


@pytest.fixture
def audio(demo_pieces) -> bytes:
    return demo_pieces[0].read_bytes()


def app_client(tmp_path: Path, **settings: Any) -> tuple[TestClient, AppServer]:
    config = ServeConfig(**settings.pop("config", {}))
    server = AppServer(folder=tmp_path, config=config, **settings)
    return TestClient(create_app(server)), server


def post(client: TestClient, audio: bytes, path: str = "/v1/audio/transcriptions", key: str | None = None,
         **fields: Any) -> Any:  # fmt: skip
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    data = {k: v for k, v in fields.items()}
    return client.post(path, files={"file": ("a.flac", audio, "audio/flac")}, data=data, headers=headers)


def error_of(response: Any) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
    return body["error"]


# ---- bodies


def test_json_and_verbose_bodies_carry_usage_rounded_up_to_whole_seconds():
    assert json.loads(render_response(TRANSCRIPT, "json")[0]) == {
        "text": "Hello there. How are you?", "usage": {"type": "duration", "seconds": 13}}  # fmt: skip
    assert json.loads(render_response(TRANSCRIPT, "verbose_json")[0])["usage"]["seconds"] == 13
    exact = Transcript(utterances=(), duration=12.0)
    assert json.loads(render_response(exact, "json")[0])["usage"]["seconds"] == 12


def test_verbose_segments_have_real_fields_only_rounded_times_and_a_leading_space():
    body = verbose(TRANSCRIPT, ["segment"])
    assert body["segments"][0] == {"id": 0, "start": 0.3, "end": 2.0, "text": " Hello there.",
                                   "speaker": "Alice", "speaker_id": "S1"}  # fmt: skip
    assert body["segments"][1] == {"id": 1, "start": 2.5, "end": 4.25, "text": " How are you?",
                                   "speaker": "Bob", "speaker_id": "S2"}  # fmt: skip
    assert body["duration"] == 12.2 and body["language"] == "english" and body["text"] == TRANSCRIPT.text
    assert body["model"] == "faster-whisper tiny.en"
    assert verbose(dataclasses.replace(TRANSCRIPT, language="xh"))["language"] == "xh"  # no name known
    assert "words" not in body and body["task"] == "transcribe"
    assert verbose(TRANSCRIPT, task="translate")["task"] == "translate"
    assert body["speakers"] == [{"id": "S1", "name": "Alice"}, {"id": "S2", "name": "Bob"}]
    assert body["murmur"]["utterances"][0]["text"] == "Hello there."


def test_words_are_bare_and_come_without_segments_when_only_words_are_asked():
    body = verbose(TRANSCRIPT, ["word"])
    assert "segments" not in body
    assert body["words"][:3] == [{"word": "Hello", "start": 0.3, "end": 0.9},
                                 {"word": "there", "start": 1.0, "end": 2.0},
                                 {"word": "How", "start": 2.5, "end": 3.0}]  # fmt: skip
    assert [w["word"] for w in body["words"]] == ["Hello", "there", "How", "are", "you"]
    assert "segments" in verbose(TRANSCRIPT, ["word", "segment"])
    assert bare_word(" don't, ") == "don't" and bare_word("...") == "" and bare_word("«Xerox»") == "Xerox"


def test_subtitles_name_speakers_only_when_labels_are_asked():
    plain = render_response(TRANSCRIPT, "srt")[0].decode()
    labelled = render_response(TRANSCRIPT, "srt", speaker_labels=True)[0].decode()
    assert "Alice" not in plain and "Alice: Hello there." in labelled
    assert "<v Bob>" in render_response(TRANSCRIPT, "vtt", speaker_labels=True)[0].decode()
    assert "<v" not in render_response(TRANSCRIPT, "vtt")[0].decode()
    text = (b"Hello there. How are you?\n", "text/plain; charset=utf-8")
    assert render_response(TRANSCRIPT, "text") == text


# ---- the client's stream


def test_deltas_are_separated_so_they_join_to_the_done_text():
    stream = ClientStream(progress=False)
    first = stream.show({"type": "transcript.text.delta", "lines": [{"text": "Hello there."}, {"text": ""}]})
    second = stream.show({"type": "transcript.text.delta", "lines": [{"text": "How"}, {"text": "are you?"}]})
    assert first == [{"type": "transcript.text.delta", "delta": "Hello there."}]
    assert second == [{"type": "transcript.text.delta", "delta": " How are you?"}]
    assert stream.show({"type": "transcript.text.delta", "lines": [{"text": ""}]}) == []
    done = stream.show({"type": "transcript.text.done", "text": "Hello there. How are you? Fine.",
                        "usage": {"type": "duration", "seconds": 3}, "segments": []})  # fmt: skip
    assert done == [{"type": "transcript.text.delta", "delta": " Fine."},
                    {"type": "transcript.text.done", "text": "Hello there. How are you? Fine.",
                     "usage": {"type": "duration", "seconds": 3}}]  # fmt: skip
    assert stream.text == "Hello there. How are you? Fine."


def test_a_done_text_equal_to_the_deltas_adds_no_delta_and_murmur_events_need_asking():
    quiet, asked = ClientStream(progress=False), ClientStream(progress=True)
    progress = {"type": "murmur.progress", "stage": "vad"}
    assert quiet.show(progress) == [] and asked.show(progress) == [progress]
    lines = [{"text": "Hi.", "chunk": 0}]
    assert asked.show({"type": "transcript.text.delta", "lines": lines})[0]["lines"] == lines
    assert "lines" not in quiet.show({"type": "transcript.text.delta", "lines": lines})[0]
    done = {"type": "transcript.text.done", "text": "Hi.", "usage": {}, "murmur": {"x": 1}}
    assert asked.show(done) == [done]
    assert quiet.show(done) == [{"type": "transcript.text.done", "text": "Hi.", "usage": {}}]


def test_an_error_event_is_openai_shaped():
    shown = ClientStream(False).show({"type": "error", "error": {"message": "broke", "type": "server_error"}})
    assert shown == [{"type": "error", "error": {"message": "broke", "type": "server_error", "param": None,
                                                 "code": None}}]  # fmt: skip


# ---- form fields


def test_form_fields_become_the_request_and_the_jobs_decode_choices():
    asked = transcription_request({"response_format": ["verbose_json"], "timestamp_granularities[]": ["word"],
                                   "stream": ["true"], "language": ["en"], "prompt": ["Alice, Bob"],
                                   "temperature": ["0.4"], "murmur_progress": ["1"],
                                   "speaker_labels": ["yes"],
                                   "diarize": ["false"], "num_speakers": ["2"], "model": ["whisper-1"],
                                   "chunking_strategy": ["auto"]})  # fmt: skip
    assert (asked.fmt, asked.granularities, asked.stream, asked.progress, asked.speaker_labels) == (
        "verbose_json", ("word",), True, True, True)  # fmt: skip
    assert asked.options == JobOptions(diarize=False, num_speakers=2, decoding=DecodeChoices(
        language="en", prompt="Alice, Bob", temperature=0.4))  # fmt: skip
    plain = transcription_request({})
    assert (plain.fmt, plain.stream, plain.progress, plain.speaker_labels) == ("json", False, False, False)
    assert plain.options == JobOptions()
    translation = translation_request({"prompt": ["x"]})
    assert translation.options.decoding == DecodeChoices(prompt="x", task="translate")
    full = translation_request({"response_format": ["srt"], "speaker_labels": ["true"],
                                "temperature": ["0.5"], "diarize": ["true"], "num_speakers": ["3"],
                                "model": ["whisper-1"]})  # fmt: skip
    assert (full.fmt, full.speaker_labels, full.stream, full.progress, full.granularities) == (
        "srt", True, False, False, ())  # fmt: skip
    assert full.options == JobOptions(diarize=True, num_speakers=3,
                                      decoding=DecodeChoices(temperature=0.5, task="translate"))  # fmt: skip
    assert translation_request({}).fmt == "json" and translation_request({}).speaker_labels is False


@pytest.mark.parametrize(("fields", "param", "message"), [
    ({"response_format": ["docx"]}, "response_format",
     "response_format must be one of json, verbose_json, text, srt, vtt, diarized_json"),
    ({"response_format": ["verbose_json"], "timestamp_granularities": ["char"]}, "timestamp_granularities",
     "timestamp_granularities may hold 'segment' and 'word'"),
    ({"timestamp_granularities": ["segment"]}, "timestamp_granularities",
     "timestamp_granularities requires response_format verbose_json"),
    ({"temperature": ["warm" * 9]}, "temperature", f"temperature must be a number, not {('warm' * 5)!r}"),
    ({"temperature": ["1.01"]}, "temperature", "temperature must be between 0 and 1"),
    ({"temperature": ["-0.1"]}, "temperature", "temperature must be between 0 and 1"),
    ({"temperature": ["nan"]}, "temperature", "temperature must be between 0 and 1"),
    ({"num_speakers": ["many"]}, "num_speakers", "num_speakers must be a whole number"),
    ({"num_speakers": ["40"]}, "num_speakers", "num_speakers must be between 1 and 32"),
    ({"min_speakers": ["0"]}, "min_speakers", "min_speakers must be between 1 and 32"),
    ({"max_speakers": ["33"]}, "max_speakers", "max_speakers must be between 1 and 32"),
    ({"max_speakers": ["-2"]}, "max_speakers", "max_speakers must be a whole number"),
    ({"min_speakers": ["4"], "max_speakers": ["3"]}, "min_speakers",
     "min_speakers must not be more than max_speakers"),
    ({"diarizer": ["fast"]}, "diarizer", "diarizer must be one of embedded, pyannote, none"),
    ({"diarize": ["false"], "diarizer": ["embedded"]}, "diarizer",
     "diarize=false finds no speakers: it cannot use diarizer=embedded"),
    ({"stream": ["maybe" * 5]}, "stream", f"stream must be true or false, not {('maybe' * 4)!r}"),
    ({"include[]": ["logprobs"]}, "include", "include is not supported: log probabilities are not offered "
                                             "by this server"),
    ({"known_speaker_names[]": ["a"]}, "known_speaker_names",
     "give one name per reference: 1 known_speaker_names for 0 known_speaker_references"),
    ({"chunking_strategy": ["server_vad"]}, "chunking_strategy",
     "chunking_strategy may only be 'auto' (voice activity)"),
    ({"langauge": ["en"]}, "langauge", "Unrecognized request argument supplied: langauge"),
])  # fmt: skip
def test_each_bad_field_is_refused_by_name(fields, param, message):
    from engine.serve.openai_errors import ApiError

    with pytest.raises(ApiError) as refused:
        transcription_request(fields)
    assert (refused.value.status, refused.value.param, refused.value.message) == (400, param, message)
    assert str(refused.value) == message


def test_a_bad_value_is_invalid_value_and_an_unoffered_one_unsupported_value():
    from engine.serve.openai_errors import ApiError

    codes = {}
    for name, value in (("temperature", "2"), ("response_format", "docx"), ("include", "logprobs")):
        with pytest.raises(ApiError) as refused:
            transcription_request({name: [value]})
        codes[name] = refused.value.code
    assert codes == {"temperature": "invalid_value", "response_format": "unsupported_value",
                     "include": "unsupported_parameter"}  # fmt: skip


def test_empty_fields_are_the_defaults_and_flags_read_as_people_write_them():
    empty = transcription_request({"temperature": [""], "num_speakers": [""], "stream": [""],
                                   "language": [""], "prompt": [""], "chunking_strategy": [""]})  # fmt: skip
    assert empty.options == JobOptions() and empty.stream is False
    for word, meaning in (("TRUE", True), ("1", True), ("yes", True), ("False", False), ("0", False),
                          ("no", False)):  # fmt: skip
        assert transcription_request({"diarize": [word]}).options.diarize is meaning


def test_the_speaker_fields_reach_the_job_as_given():
    asked = transcription_request({"diarizer": ["pyannote"], "min_speakers": ["2"], "max_speakers": ["2"]})
    assert asked.options == JobOptions(diarizer="pyannote", min_speakers=2, max_speakers=2)
    both = transcription_request({"diarize": ["false"], "diarizer": ["none"], "min_speakers": ["3"]})
    assert both.options == JobOptions(diarize=False, diarizer="none", min_speakers=3)


def test_translations_take_no_language_or_stream():
    from engine.serve.openai_errors import ApiError

    for name in ("language", "stream", "timestamp_granularities"):
        with pytest.raises(ApiError) as refused:
            translation_request({name: ["x"]})
        assert refused.value.param == name and refused.value.code == "unknown_parameter"
    assert transcription_request({"temperature": ["1"]}).options.decoding.temperature == 1.0
    assert transcription_request({"temperature": ["0"]}).options.decoding.temperature == 0.0


# ---- decode choices on the backend


def test_whisper_takes_the_jobs_language_prompt_and_temperature_and_refuses_what_tiny_en_cannot():
    backend = WhisperBackend()
    assert job_backend(backend, DecodeChoices()) is backend
    variant = job_backend(backend, DecodeChoices(language="EN", prompt="Alice", temperature=0.6))
    config = variant.config
    assert (config.language, config.prompt, config.temperature) == ("en", "Alice", 0.6)
    assert variant._shares is backend  # the loaded model is shared, not loaded again
    for choices, param in ((DecodeChoices(language="de"), "language"),
                           (DecodeChoices(language="auto"), "language"),
                           (DecodeChoices(task="translate"), "model")):  # fmt: skip
        with pytest.raises(Refused) as refused:
            job_backend(backend, choices)
        assert refused.value.param == param


def test_a_multilingual_whisper_translates_from_the_language_it_finds():
    from engine.backends.whisper import WhisperConfig

    backend = WhisperBackend(WhisperConfig(model="small"))
    variant = job_backend(backend, DecodeChoices(task="translate"))
    assert (variant.config.task, variant.config.language) == ("translate", "auto")
    assert job_backend(backend, DecodeChoices(language="de")).config.language == "de"


# ---- the app


def test_models_have_a_stable_id_and_unknown_ids_and_routes_are_openai_404s(tmp_path):
    client, _ = app_client(tmp_path)
    listed = client.get("/v1/models").json()
    assert listed == {"object": "list", "data": [
        {"id": "whisper-tiny.en", "object": "model", "created": 0, "owned_by": "murmur"}]}  # fmt: skip
    assert client.get("/v1/models/whisper-tiny.en").json() == listed["data"][0]
    missing = client.get("/v1/models/whisper-1")
    assert missing.status_code == 404 and error_of(missing) == {
        "message": "The model 'whisper-1' does not exist", "type": "invalid_request_error", "param": "model",
        "code": "model_not_found"}  # fmt: skip
    route = client.get("/v2/nothing")
    assert route.status_code == 404 and error_of(route)["message"] == "Invalid URL (GET /v2/nothing)"
    assert client.delete("/v1/models").status_code == 405


def test_model_ids_drop_folders_and_spaces():
    from types import SimpleNamespace

    from engine.backends.whisper import WhisperConfig

    assert model_id(WhisperBackend(WhisperConfig(model="/srv/models/ my model! /"))) == "whisper-my-model"
    assert model_id(WhisperBackend(WhisperConfig(model="/"))) == "whisper-model"

    def vibevoice(engine: str) -> SimpleNamespace:
        config = SimpleNamespace(model="/data/ckpt/VibeVoice-ASR", engine=engine, server_model="vv/ASR 7B")
        return SimpleNamespace(name="vibevoice", backend=SimpleNamespace(config=config), config=None)

    assert model_id(vibevoice("murmur")) == "vibevoice-VibeVoice-ASR"  # the wrapped backend's model
    assert model_id(vibevoice("server")) == "vibevoice-ASR-7B"  # a vLLM server's model name


def test_keys_are_checked_as_openai_words_it_and_metrics_open_only_when_chosen(tmp_path, audio):
    client, _ = app_client(tmp_path, config={"api_key": KEY})
    none, wrong = client.get("/v1/models"), client.get("/v1/models", headers={"Authorization": "Bearer nope"})
    assert none.status_code == wrong.status_code == 401
    assert none.headers["WWW-Authenticate"] == wrong.headers["WWW-Authenticate"] == "Bearer"
    assert error_of(none) == {"message": "You didn't provide an API key. You need to provide your API key "
                              "in an Authorization header using Bearer auth (i.e. Authorization: "
                              "Bearer YOUR_KEY).",
                              "type": "invalid_request_error", "param": None, "code": None}  # fmt: skip
    assert error_of(wrong) == {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                               "param": None, "code": "invalid_api_key"}  # fmt: skip
    assert post(client, audio).status_code == 401
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
    public, _ = app_client(tmp_path, config={"api_key": KEY, "metrics_public": True})
    assert public.get("/metrics").status_code == 200 and public.get("/v1/models").status_code == 401
    health = public.get("/health").json()
    assert health["model"] is None and health["model_loaded"] is True


def test_a_transcription_answers_in_the_asked_format_with_the_jobs_choices(tmp_path, audio):
    client, server = app_client(tmp_path)
    answer = post(client, audio, language="en", prompt="Alice", temperature="0.2", diarize="false")
    assert answer.status_code == 200 and answer.json() == {
        "text": "Hello there. How are you?", "usage": {"type": "duration", "seconds": 13}}  # fmt: skip
    assert server.registry.options[0] == JobOptions(diarize=False, decoding=DecodeChoices(
        language="en", prompt="Alice", temperature=0.2), filename="a.flac")  # fmt: skip
    srt = post(client, audio, response_format="srt", stream="true")
    assert srt.headers["content-type"].startswith("application/x-subrip") and "Alice" not in srt.text
    assert "Alice:" in post(client, audio, response_format="srt", speaker_labels="true").text
    assert post(client, audio, response_format="verbose_json").json()["segments"][0]["speaker"] == "Alice"
    refused = post(client, audio, language="de")
    assert refused.status_code == 400 and error_of(refused)["param"] == "language"
    assert len(server.registry.jobs) == 4  # the refused request started no job
    assert list(tmp_path.iterdir()) == []  # every upload deleted


def test_a_stream_shows_openai_events_and_murmur_events_only_when_asked(tmp_path, audio):
    client, _ = app_client(tmp_path)

    def events(**fields: str) -> list[Any]:
        body = post(client, audio, stream="true", **fields).text
        data = [line[6:] for line in body.split("\n") if line.startswith("data: ")]
        assert data[-1] == "[DONE]"
        return [json.loads(d) for d in data[:-1]]

    plain = events()
    assert [e["type"] for e in plain] == ["transcript.text.delta"] * 2 + ["transcript.text.done"]
    assert "".join(e["delta"] for e in plain[:-1]) == plain[-1]["text"] == TRANSCRIPT.text
    assert plain[-1]["usage"] == {"type": "duration", "seconds": 13}
    asked = events(murmur_progress="true")
    assert asked[0]["type"] == "murmur.progress" and "murmur" in asked[-1]


def test_a_quiet_stream_sends_comment_lines_and_closing_it_cancels_the_job(tmp_path, audio):
    client, _ = app_client(tmp_path, config={"heartbeat_seconds": 0.1},
                           registry=InstantRegistry(delay=0.5))  # fmt: skip
    body = post(client, audio, stream="true").text
    assert body.count(": working\n\n") >= 2 and body.endswith("data: [DONE]\n\n")
    assert body.index(": working") < body.index("data: ")  # while the job had nothing to say
    slow, server = app_client(tmp_path, registry=InstantRegistry(delay=30))
    with slow.stream("POST", "/v1/audio/transcriptions", files={"file": ("a.flac", audio, "audio/flac")},
                     data={"stream": "true"}) as stream:  # fmt: skip
        assert stream.status_code == 200
    deadline = time.monotonic() + 10
    while not server.registry.jobs[0].over and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.registry.counts["cancelled"] == 1


def test_a_long_json_answer_sends_heartbeat_spaces_then_the_body(tmp_path, audio):
    client, server = app_client(tmp_path, config={"heartbeat_seconds": 0.1},
                                registry=InstantRegistry(delay=0.6))  # fmt: skip
    answer = post(client, audio)
    spaces = len(answer.content) - len(answer.content.lstrip(b" "))
    assert answer.status_code == 200 and spaces >= 3 and json.loads(answer.content)["text"] == TRANSCRIPT.text
    text = post(client, audio, response_format="text")  # no blanks before text: they would change it
    assert text.text == "Hello there. How are you?\n"
    assert server.registry.counts == {"done": 2, "failed": 0, "cancelled": 0}


def test_a_job_failing_after_the_heartbeats_ends_the_body_with_the_error(tmp_path, audio):
    client, _ = app_client(tmp_path, config={"heartbeat_seconds": 0.1},
                           registry=InstantRegistry(delay=0.4, failure="the model broke"))  # fmt: skip
    answer = post(client, audio)
    assert answer.status_code == 200 and answer.content.startswith(b" ")
    assert json.loads(answer.content) == {"error": {"message": "the model broke", "type": "server_error",
                                                    "param": None, "code": None}}  # fmt: skip
    quick, _ = app_client(tmp_path, registry=InstantRegistry(failure="the model broke"))
    failed = post(quick, audio)
    assert failed.status_code == 500 and error_of(failed)["message"] == "the model broke"


def test_a_translation_goes_through_a_multilingual_model_and_says_so(tmp_path, audio):
    from engine.backends.whisper import WhisperConfig

    client, server = app_client(tmp_path, backend=WhisperBackend(WhisperConfig(model="small")))
    answer = post(client, audio, "/v1/audio/translations", response_format="verbose_json", prompt="Hi")
    assert answer.status_code == 200 and answer.json()["task"] == "translate"
    assert answer.json()["segments"][0]["text"] == " Hello there."
    assert server.registry.options[0].decoding == DecodeChoices(prompt="Hi", task="translate")
    refused = post(client, audio, "/v1/audio/translations", language="de")
    assert refused.status_code == 400 and error_of(refused)["param"] == "language"


def test_a_job_refusing_its_audio_is_a_400_and_a_broken_one_a_500(tmp_path, audio):
    class Refusing(InstantRegistry):
        def _run(self, job: Job, path: Path) -> None:
            path.unlink(missing_ok=True)
            error = {"message": "no speech", "type": "invalid_request_error"}
            job.end("failed", {"type": "error", "error": error})

    client, _ = app_client(tmp_path, registry=Refusing())
    refused = post(client, audio)
    assert refused.status_code == 400 and error_of(refused)["message"] == "no speech"


def test_a_client_leaving_during_heartbeats_cancels_its_job(tmp_path, audio):
    client, server = app_client(tmp_path, config={"heartbeat_seconds": 0.05},
                                registry=InstantRegistry(delay=30))  # fmt: skip
    with client.stream("POST", "/v1/audio/transcriptions",
                       files={"file": ("a.flac", audio, "audio/flac")}) as answer:  # fmt: skip
        assert next(answer.iter_bytes()).startswith(b" ")
    deadline = time.monotonic() + 10
    while not server.registry.jobs[0].over and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.registry.counts["cancelled"] == 1


def test_a_full_server_says_429_with_retry_after_and_a_loading_one_503(tmp_path, audio):
    client, server = app_client(tmp_path, config={"max_queued_jobs": 1}, registry=InstantRegistry(delay=30))
    server.registry.submit(tmp_path / "held.flac", 1.0, JobOptions())
    busy = post(client, audio)
    assert busy.status_code == 429 and int(busy.headers["Retry-After"]) == 5
    assert error_of(busy) == {"message": "the server is busy with 1 jobs and uploads; try again shortly",
                              "type": "requests", "param": None, "code": "rate_limit_exceeded"}  # fmt: skip
    server.registry.jobs[0].cancel()
    loading, server = app_client(tmp_path, ready=False)
    answer = post(loading, audio)
    assert answer.status_code == 503 and error_of(answer)["type"] == "server_error"


def test_bad_uploads_are_400_or_413_naming_the_file(tmp_path, audio):
    client, _ = app_client(tmp_path, config={"max_upload_mb": 0.01, "max_audio_hours": 0.001})
    too_big = post(client, audio)
    assert too_big.status_code == 413 and error_of(too_big)["param"] == "file"
    small, _ = app_client(tmp_path, config={"max_audio_hours": 0.001})
    too_long = post(small, audio)  # 12 s against 3.6 s
    assert too_long.status_code == 413 and error_of(too_long)["param"] == "file"
    plain, _ = app_client(tmp_path, config={"max_upload_mb": 0.01})

    def chunked():  # no Content-Length: the limit holds while the body streams in
        yield b'--b0\r\nContent-Disposition: form-data; name="file"; filename="a.flac"\r\n\r\n'
        yield audio
        yield b"\r\n--b0--\r\n"

    streamed = plain.post("/v1/audio/transcriptions", content=chunked(),
                          headers={"Content-Type": "multipart/form-data; boundary=b0"})  # fmt: skip
    assert streamed.status_code == 413 and error_of(streamed) == {
        "message": "the file is larger than this server's limit of 0.00999928 MB",
        "type": "invalid_request_error", "param": "file", "code": None}  # fmt: skip
    plain, _ = app_client(tmp_path)
    not_audio = post(plain, b"this is not audio")
    assert not_audio.status_code == 400 and error_of(not_audio)["param"] == "file"
    headers = {"Content-Type": "application/json"}
    not_form = plain.post("/v1/audio/transcriptions", content=b"{}", headers=headers)
    assert not_form.status_code == 400 and error_of(not_form)["type"] == "invalid_request_error"
    assert list(tmp_path.iterdir()) == []
