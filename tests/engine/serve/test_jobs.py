"""The server in process (`Server`, `Places`, `JobRegistry`, the metrics) with the bundled whisper
model, through FastAPI's TestClient: what an operator sees in /health and /metrics after jobs
end, fail or are cancelled, the 429 at exactly the limit, and what a client reads."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from fastapi.testclient import TestClient

from engine.pipeline import PipelineConfig
from engine.serve.app import create_app
from engine.serve.config import ServeConfig
from engine.serve.jobs import Job, JobOptions, JobRegistry, QueueFull
from engine.serve.server import Server
from engine.serve.whisper_batch import WhisperBatcher
from engine.speakers import SpeakerConfig
from tests.engine.serve.conftest import ROOT, write_flac

NO_SPEAKERS = PipelineConfig(speakers=SpeakerConfig(diarizer="none"))
SECONDS = 3  # of speech per job: short, so mutants run fast


@pytest.fixture(scope="module")
def server():
    s = Server.create("whisper", {}, NO_SPEAKERS, ServeConfig(max_queued_jobs=2, max_audio_hours=0.05))
    yield s
    s.close()
    assert not s.folder.exists()


@pytest.fixture(scope="module")
def client(server):
    return TestClient(create_app(server))


@pytest.fixture(scope="module")
def speech(tmp_path_factory) -> Path:
    from engine.audio.io import load_audio

    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000)
    return write_flac(tmp_path_factory.mktemp("speech") / "speech.flac", demo.samples[: SECONDS * 16000])


def post(client: TestClient, path: Path, name: str = "talk.flac", **fields: str):
    with path.open("rb") as f:
        return client.post("/v1/audio/transcriptions", files={"file": (name, f)}, data=fields)


def copy(path: Path, folder: Path) -> Path:
    """A private copy, as an upload is: the job deletes it when it ends."""
    target = folder / f"upload-{time.monotonic_ns()}{path.suffix}"
    target.write_bytes(path.read_bytes())
    return target


def finished(job: Job, registry: JobRegistry) -> Job:
    """The job once ended; a failed test, not a long wait, when its thread has left the registry
    without ending it (a client would wait for ever)."""
    deadline = time.monotonic() + 120
    while not job.over:
        gone = job.id not in registry.jobs  # `end` comes before the thread counts the job out
        assert not gone or job.over, f"the job's thread ended and left it {job.state}"
        assert time.monotonic() < deadline, "the job never ended"
        time.sleep(0.02)
    return job


def settled(registry: JobRegistry) -> None:
    """Until the job threads have counted their jobs out (just after each job's end)."""
    deadline = time.monotonic() + 30
    while registry.active and time.monotonic() < deadline:
        time.sleep(0.02)


def metric(client: TestClient, name: str) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {name}")


def test_every_job_shares_the_one_model_and_voice_detector_and_streams_from_the_first_chunk(server):
    first, second = server.pipeline(JobOptions()), server.pipeline(JobOptions(diarize=False))
    assert first.backend is second.backend is server.backend
    assert first.detector is second.detector is server.detector  # one VAD model, not one per job
    assert server.backend.config.ramp  # batches grow 1, 2, 4…: a stream's first lines after one chunk
    assert isinstance(server.shared, WhisperBatcher) and server.model == "faster-whisper tiny.en"
    assert first.backend.batcher is server.shared  # every job's clips go to the one batcher
    assert server.shared.model is server.backend.backend.loaded()  # which decodes with the one model


def test_a_finished_job_is_counted_out_and_its_audio_counted_in(client, server, speech):
    done = metric(client, 'murmur_jobs_total{state="done"}')
    seconds = metric(client, "murmur_audio_seconds_total")
    answer = post(client, speech, response_format="verbose_json")
    assert answer.status_code == 200, answer.text
    settled(server.registry)
    assert client.get("/health").json()["jobs_active"] == 0 == metric(client, "murmur_jobs_active")
    assert metric(client, 'murmur_jobs_total{state="done"}') == done + 1
    assert metric(client, "murmur_audio_seconds_total") == pytest.approx(seconds + SECONDS)
    assert answer.json()["murmur"]["source"] == "talk.flac" and "x-murmur-warnings" not in answer.headers
    assert list(server.folder.iterdir()) == []


def test_the_last_place_is_taken_and_one_more_is_429_be_it_job_or_upload(client, server, speech):
    with server.places.arriving():  # one upload arriving: one place of two left
        assert client.get("/health").json()["jobs_active"] == 0
        assert post(client, speech).status_code == 200
        with server.places.arriving():  # both places held
            answer = post(client, speech)
            assert answer.status_code == 429 and answer.headers["retry-after"] == "5"
            busy = "the server is busy with 2 jobs and uploads; try again shortly"
            assert answer.json()["error"] == {"message": busy, "type": "requests", "param": None,
                                              "code": "rate_limit_exceeded"}  # fmt: skip
            with pytest.raises(QueueFull), server.places.arriving():
                pass
        assert server.places.taken == 1
    assert server.places.taken == 0 and not server.places.full


def test_an_upload_holds_its_place_until_its_job_starts_and_the_job_then_holds_it(server, speech, tmp_path):
    registry = server.registry
    with server.places.arriving():
        job = registry.submit(copy(speech, server.folder), SECONDS, JobOptions())
        assert server.places.taken == 2 and server.places.full
    assert server.places.taken == 1
    finished(job, registry)
    settled(registry)
    assert server.places.taken == 0


def test_the_registry_takes_exactly_max_jobs(server, speech, tmp_path):
    registry = JobRegistry(server.pipeline, 1)
    try:
        job = registry.submit(copy(speech, server.folder), SECONDS, JobOptions())
        with pytest.raises(QueueFull, match=r"^the server is busy with 1 jobs; try again shortly$"):
            registry.submit(copy(speech, tmp_path), SECONDS, JobOptions())  # refused: the caller's to delete
        finished(job, registry)
        settled(registry)
        assert registry.active == 0 and registry.counts == {"done": 1, "failed": 0, "cancelled": 0}
        assert registry.audio_seconds == SECONDS
    finally:
        registry.shutdown()
    with pytest.raises(ValueError, match="at least 1"):
        JobRegistry(server.pipeline, 0)


@pytest.fixture(scope="module")
def long_speech(tmp_path_factory) -> Path:
    """Two minutes of the demo meeting: seconds to load and find speech in, more to decode."""
    from engine.audio.io import load_audio

    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000)
    return write_flac(tmp_path_factory.mktemp("long") / "long.flac", demo.samples[: 120 * 16000])


def stages(job: Job) -> list[str]:
    return [e["stage"] for e in job.events_from(0) if e["type"] == "murmur.progress"]


def test_a_cancelled_job_is_counted_cancelled_and_its_upload_deleted(server, long_speech):
    upload = copy(long_speech, server.folder)
    registry = JobRegistry(server.pipeline, 1)
    try:
        job = registry.submit(upload, 120.0, JobOptions())
        while not job.events_from(0, timeout=1.0):
            pass
        job.cancel()
        finished(job, registry)
        settled(registry)
        assert job.state == "cancelled" and job.transcript is None
        assert set(stages(job)) <= {"load", "vad"}  # stopped while the file was being prepared
        assert job.events_from(0)[-1] == {"type": "error", "error": {"message": "the job was cancelled",
                                                                     "type": "cancelled"}}  # fmt: skip
        assert registry.counts == {"done": 0, "failed": 0, "cancelled": 1} and registry.audio_seconds == 0
        assert not upload.exists()
    finally:
        registry.shutdown()


def test_shutting_the_registry_down_cancels_a_job_while_it_decodes(server, long_speech):
    upload = copy(long_speech, server.folder)
    registry = JobRegistry(server.pipeline, 1)
    job = registry.submit(upload, 120.0, JobOptions())
    while "infer" not in stages(job) and not job.over:
        job.events_from(len(job.events_from(0)), timeout=1.0)
    registry.shutdown()  # as the server does when it stops
    finished(job, registry)
    assert job.state == "cancelled" and job.transcript is None
    assert "stitch" not in stages(job)  # its decode stopped: it never got to the end
    settled(registry)
    assert registry.counts["cancelled"] == 1 and not upload.exists()


def test_a_job_that_fails_on_its_file_says_so_in_the_clients_words(server, tmp_path):
    registry = JobRegistry(server.pipeline, 1)
    try:
        missing = server.folder / "upload-gone.wav"
        job = finished(registry.submit(missing, 1.0, JobOptions(filename="talk.wav")), registry)
        settled(registry)
        error = {"message": "'talk.wav' was not found", "type": "invalid_request_error"}
        assert job.state == "failed" and job.events_from(0)[-1] == {"type": "error", "error": error}
        assert registry.counts["failed"] == 1 and registry.active == 0
    finally:
        registry.shutdown()


def test_a_cut_file_warns_its_own_job_in_the_clients_words_and_no_other(server, speech, tmp_path):
    cut = tmp_path / "cut.wav"
    sf.write(cut, np.zeros(16000 * 20, np.float32), 16000, subtype="PCM_16")
    cut.write_bytes(cut.read_bytes()[: 44 + 2 * 16000 * 4])
    registry = JobRegistry(server.pipeline, 2)
    try:
        warned = registry.submit(copy(cut, server.folder), 4.0, JobOptions(filename="call.wav"))
        clean = registry.submit(copy(speech, server.folder), SECONDS, JobOptions(filename="clean.flac"))
        finished(warned, registry), finished(clean, registry)
        settled(registry)
        said = ("'call.wav' ends before its header says: only 0:00:04 of 0:00:20 could be read (the rest is "
                "missing)")
        assert warned.warnings == [said] and clean.warnings == []
        assert {"type": "murmur.warning", "message": said} in warned.events_from(0)
        assert warned.transcript is not None and warned.transcript.source == "call.wav"
    finally:
        registry.shutdown()


def test_a_transcript_without_a_client_name_names_no_file(server, speech):
    registry = JobRegistry(server.pipeline, 1)
    try:
        job = finished(registry.submit(copy(speech, server.folder), SECONDS, JobOptions()), registry)
        settled(registry)
        assert job.transcript is not None and job.transcript.source is None
        assert "upload-" not in json.dumps(job.events_from(0))
    finally:
        registry.shutdown()


def test_a_jobs_options_choose_its_speakers():
    server = Server(_backend(), None, PipelineConfig(), ServeConfig())
    try:
        assert server.pipeline(JobOptions()).config.speakers == PipelineConfig().speakers
        assert server.pipeline(JobOptions(diarize=False)).config.speakers.diarizer == "none"
        assert server.pipeline(JobOptions(diarize=True)).config.speakers.diarizer == "embedded"
        three = server.pipeline(JobOptions(num_speakers=3)).config.speakers
        assert (three.num_speakers, three.min_speakers, three.max_speakers) == (3, None, None)
        with pytest.raises(ValueError, match="between 1 and 32"):
            JobOptions(num_speakers=33)
        assert JobOptions(num_speakers=32).num_speakers == 32 and JobOptions(num_speakers=1).num_speakers == 1
        with pytest.raises(ValueError):
            JobOptions(num_speakers=0)
    finally:
        server.close()
    assert not server.ready and not server.folder.exists()


def _backend():
    from engine.backends import create_backend

    return create_backend("whisper")


def test_metrics_text_for_an_operator():
    server = Server(_backend(), None, NO_SPEAKERS, ServeConfig(max_queued_jobs=3))
    try:
        server.registry.counts.update(done=2, failed=1)
        server.registry.audio_seconds = 12.25
        text = TestClient(create_app(server)).get("/metrics").text
    finally:
        server.close()
    assert text == (
        "# HELP murmur_model_loaded 1 when the model is loaded and jobs taken\n"
        "# TYPE murmur_model_loaded gauge\nmurmur_model_loaded 1\n"
        "# HELP murmur_jobs_active jobs queued or running\n"
        "# TYPE murmur_jobs_active gauge\nmurmur_jobs_active 0\n"
        "# HELP murmur_jobs_max most jobs taken at once (more get 429)\n# TYPE murmur_jobs_max gauge\n"
        "murmur_jobs_max 3\n# HELP murmur_uploads_arriving uploads being received or measured\n"
        "# TYPE murmur_uploads_arriving gauge\nmurmur_uploads_arriving 0\n"
        "# HELP murmur_audio_seconds_total audio seconds of finished jobs\n"
        "# TYPE murmur_audio_seconds_total counter\nmurmur_audio_seconds_total 12.25\n"
        "# HELP murmur_realtime_sessions live-audio WebSocket sessions open\n"
        "# TYPE murmur_realtime_sessions gauge\nmurmur_realtime_sessions 0\n"
        "# HELP murmur_jobs_total jobs that ended, by how\n# TYPE murmur_jobs_total counter\n"
        'murmur_jobs_total{state="cancelled"} 0\nmurmur_jobs_total{state="done"} 2\n'
        'murmur_jobs_total{state="failed"} 1\n'
    )


class _Shared:
    """The shared decode loop's counters as `/metrics` reads them (VibeVoice's loop needs a model)."""

    def __init__(self, counters: tuple[int, int, int], kept: list[float], tokens: int = 300) -> None:
        self._counters, self.kept, self.tokens, self.failures = counters, kept, tokens, 1
        self.source = type("Source", (), {"jobs": 2, "rows_freed": 3, "chunks_dropped": 4})()

    def counters(self) -> tuple[int, int, int]:
        return self._counters


def decode_metrics(shared: _Shared) -> str:
    server = Server(_backend(), shared, NO_SPEAKERS, ServeConfig())
    try:
        server.started = time.monotonic() - 100.0
        text = TestClient(create_app(server)).get("/metrics").text
    finally:
        server.shared = None
        server.close()
    assert text.startswith("# HELP murmur_model_loaded") and "\nmurmur_jobs_active 0\n" in text  # kept
    return text[text.index("# HELP murmur_decode_steps_total") :]


def test_metrics_of_the_shared_batch():
    text = decode_metrics(_Shared((10, 35, 4), [0.5, 0.25]))
    speed = text[text.index("\nmurmur_tokens_per_second ") + 1 :].split("\n")[0]
    assert float(speed.split()[1]) == pytest.approx(3.0, rel=0.05)
    assert text.replace(speed, "murmur_tokens_per_second S") == (
        "# HELP murmur_decode_steps_total decode steps of the shared batch\n"
        "# TYPE murmur_decode_steps_total counter\nmurmur_decode_steps_total 10\n"
        "# HELP murmur_decode_row_steps_total rows decoded, summed over steps\n"
        "# TYPE murmur_decode_row_steps_total counter\nmurmur_decode_row_steps_total 35\n"
        "# HELP murmur_rows_per_step mean rows per decode step\n"
        "# TYPE murmur_rows_per_step gauge\nmurmur_rows_per_step 3.5\n"
        "# HELP murmur_rows_active rows of the batch occupied now\n"
        "# TYPE murmur_rows_active gauge\nmurmur_rows_active 4\n"
        "# HELP murmur_queue_jobs jobs with chunks in the shared queue or in rows\n"
        "# TYPE murmur_queue_jobs gauge\nmurmur_queue_jobs 2\n"
        "# HELP murmur_rows_freed_cancelled_total rows freed because their job was cancelled\n"
        "# TYPE murmur_rows_freed_cancelled_total counter\nmurmur_rows_freed_cancelled_total 3\n"
        "# HELP murmur_chunks_dropped_cancelled_total queued chunks dropped by a cancel\n"
        "# TYPE murmur_chunks_dropped_cancelled_total counter\nmurmur_chunks_dropped_cancelled_total 4\n"
        "# HELP murmur_tokens_generated_total tokens generated, all jobs\n"
        "# TYPE murmur_tokens_generated_total counter\nmurmur_tokens_generated_total 300\n"
        "# HELP murmur_tokens_per_second tokens per second since start\n"
        "# TYPE murmur_tokens_per_second gauge\nmurmur_tokens_per_second S\n"
        "# HELP murmur_kv_kept_fraction kept/logical KV at the end of recent chunks\n"
        "# TYPE murmur_kv_kept_fraction gauge\nmurmur_kv_kept_fraction 0.375\n"
        "# HELP murmur_decode_restarts_total times the shared decode loop failed\n"
        "# TYPE murmur_decode_restarts_total counter\nmurmur_decode_restarts_total 1\n"
    )


def test_metrics_of_a_shared_batch_that_has_not_decoded_yet():
    text = decode_metrics(_Shared((0, 0, 0), [], tokens=0))
    assert "\nmurmur_rows_per_step 0\n" in text and "\nmurmur_kv_kept_fraction 1\n" in text
    assert "\nmurmur_tokens_per_second 0\n" in text


def test_events_wait_for_the_next_one_and_end_with_the_job():
    job = Job("job-1", 1.0)
    arrived = threading.Timer(0.05, lambda: job.emit({"type": "x"}))
    arrived.start()
    assert job.events_from(0, timeout=30) == [{"type": "x"}]
    assert job.events_from(1) == [] and not job.over and job.state == "queued"
    job.end("done", {"type": "end"})
    assert job.over and job.finished is not None and job.events_from(1, timeout=30) == [{"type": "end"}]
    with contextlib.suppress(Exception):
        arrived.join()


def read_as_an_event_lands(job: Job, start: int, timeout: float | None = None) -> list[dict]:
    """`job.events_from(start[, timeout])` while another thread emits `{"type": "late"}`, held back by
    the job's lock until the reader waits: the late event is in the answer only if the reader waited."""
    with job._changed:
        late = threading.Thread(target=job.emit, args=({"type": "late"},))
        late.start()
        got = job.events_from(start) if timeout is None else job.events_from(start, timeout)
    late.join()
    return got


def test_a_reader_waits_only_when_asked_and_only_while_it_has_nothing_new():
    job, first, late = Job("job-1", 1.0), {"type": "first"}, {"type": "late"}
    job.emit(first)
    assert read_as_an_event_lands(job, 1) == []  # the server's stream polls: it never blocks there
    assert read_as_an_event_lands(job, 0, timeout=30) == [first, late]  # it had some: no wait
    assert read_as_an_event_lands(job, 3, timeout=1) == [late]  # nothing new: it waited
    with ThreadPoolExecutor(1) as pool:
        reader = pool.submit(job.events_from, 4, 0.01)
        try:
            assert reader.result(timeout=60) == []  # nothing came: back after its 0.01 s, not never
        finally:
            job.emit({"type": "release"})  # a reader waiting for ever (the bug) is let go


def test_a_job_that_fails_on_the_servers_side_is_a_server_error_in_one_sentence(speech):
    broken = PipelineConfig(speakers=SpeakerConfig(diarizer="pyannote", pyannote="/nonexistent/pipeline"))
    server = Server.create("whisper", {}, broken, ServeConfig())
    try:
        upload = copy(speech, server.folder)
        job = server.registry.submit(upload, SECONDS, JobOptions(filename="t.flac"))
        finished(job, server.registry)
        message = "the pyannote pipeline '/nonexistent/pipeline' does not exist"
        error = {"message": message, "type": "server_error"}
        assert job.state == "failed" and job.events_from(0)[-1] == {"type": "error", "error": error}
        settled(server.registry)
        assert server.registry.counts == {"done": 0, "failed": 1, "cancelled": 0}
    finally:
        server.close()


def test_a_server_whose_model_cannot_load_is_not_built(tmp_path):
    from engine.errors import ModelLoadError

    with pytest.raises(ModelLoadError, match="does not exist"):
        Server.create("whisper", {"model": str(tmp_path / "missing")}, NO_SPEAKERS, ServeConfig())
    assert not list(tmp_path.iterdir())


def test_a_jobs_diarizer_and_bounds_replace_the_servers_and_a_count_wins_over_bounds():
    from engine.serve.server import job_speakers
    from engine.speakers import SpeakerConfig

    served = SpeakerConfig(diarizer="none", min_speakers=1, max_speakers=8)
    assert job_speakers(served, JobOptions(diarizer="embedded")).diarizer == "embedded"
    assert job_speakers(SpeakerConfig(), JobOptions(diarize=False, diarizer="embedded")).diarizer == "none"
    bounded = job_speakers(served, JobOptions(max_speakers=3))
    assert (bounded.min_speakers, bounded.max_speakers, bounded.num_speakers) == (1, 3, None)
    counted = job_speakers(served, JobOptions(num_speakers=2, min_speakers=1, max_speakers=5))
    assert (counted.num_speakers, counted.min_speakers, counted.max_speakers) == (2, None, None)
    assert job_speakers(served, JobOptions()) == served
    with pytest.raises(ValueError, match="max_speakers must be between 1 and 32"):
        JobOptions(max_speakers=33)


def test_a_jobs_events_are_what_a_streaming_client_reads_in_order(server, speech):
    registry = JobRegistry(server.pipeline, 1)
    try:
        job = registry.submit(copy(speech, server.folder), SECONDS, JobOptions(filename="t.flac"))
        finished(job, registry)
        settled(registry)
    finally:
        registry.shutdown()
    events = job.events_from(0)
    model = "faster-whisper tiny.en"
    assert events[0] == {"type": "murmur.job", "id": job.id, "duration": SECONDS, "model": model}
    progress = [(e["stage"], e["done"], e["total"], e["eta_seconds"], e["detail"])
                for e in events if e["type"] == "murmur.progress"]  # fmt: skip
    assert {type(eta) for *_, eta, _ in progress} == {type(None), float}  # seconds, as 0.0 not 0
    assert progress == [
        ("load", 0, 1, None, ""), ("load", SECONDS, SECONDS, 0.0, ""),
        ("vad", 0, SECONDS, None, ""), ("vad", SECONDS, SECONDS, 0.0, ""),
        ("chunk", 1, 1, None, "1 chunks"),
        ("infer", 0, 1, None, "loading faster-whisper tiny.en"), ("infer", 1, 1, 0.0, ""),
        ("stitch", 1, 1, None, ""),
    ]  # fmt: skip
    deltas = [e for e in events if e["type"] == "transcript.text.delta"]
    assert job.transcript is not None and job.transcript.text.startswith("I'd like to keep this meeting")
    assert [d["delta"] for d in deltas] == [job.transcript.text]  # the one chunk's line, once
    assert [li["text"] for li in deltas[0]["lines"]] == [job.transcript.text]
    assert [e["type"] for e in events].index("transcript.text.delta") < len(events) - 2  # before the stitch
    assert events[-1]["type"] == "transcript.text.done" and events[-1]["text"] == job.transcript.text
    assert events[-1]["duration"] == SECONDS
    assert events[-1]["segments"][0]["text"].strip() == job.transcript.text
    assert job.state == "done" and job.warnings == []


def test_a_job_whose_pipeline_refuses_it_fails_as_the_clients_error_in_the_clients_words(server, speech):
    upload = copy(speech, server.folder)

    def refusing(options: JobOptions):
        raise ValueError(f"'{upload.name}' asks for a language {upload.name} cannot take")

    registry = JobRegistry(refusing, 1)
    try:
        job = finished(registry.submit(upload, SECONDS, JobOptions(filename="t.flac")), registry)
        settled(registry)
    finally:
        registry.shutdown()
    error = {"message": "'t.flac' asks for a language t.flac cannot take", "type": "invalid_request_error"}
    assert job.events_from(0) == [{"type": "error", "error": error}] and job.state == "failed"
    assert registry.counts == {"done": 0, "failed": 1, "cancelled": 0} and not upload.exists()


def test_a_bug_in_a_job_is_a_server_error_that_keeps_its_details_in_the_log(server, speech, caplog):
    def broken(options: JobOptions):
        raise KeyError("internal detail")

    registry = JobRegistry(broken, 1)
    try:
        upload = copy(speech, server.folder)
        job = finished(registry.submit(upload, SECONDS, JobOptions(filename="t.flac")), registry)
        settled(registry)
    finally:
        registry.shutdown()
    error = {"message": "the server failed on this file (see its log)", "type": "server_error"}
    assert job.events_from(0) == [{"type": "error", "error": error}] and job.state == "failed"
    assert "KeyError: 'internal detail'" in caplog.text  # for the operator only
    failed = [r.getMessage() for r in caplog.records if r.name == "engine.serve.jobs"]
    assert failed == [f"job {job.id} failed"]  # which job, in the operator's log
    assert registry.counts == {"done": 0, "failed": 1, "cancelled": 0} and not upload.exists()
    assert registry.active == 0  # its place is free again


def test_the_server_keeps_its_settings_its_vad_and_its_upload_folder_for_its_life():
    from engine.audio.vad import VadConfig

    vad = VadConfig(threshold=0.7)
    before = set(Path(tempfile.gettempdir()).glob("murmur-serve-*"))
    server = Server(_backend(), None, PipelineConfig(vad=vad), ServeConfig(max_queued_jobs=2))
    try:
        assert server.pipeline(JobOptions()).detector.config == vad  # the operator's VAD settings
        folder = server.folder
        made = set(Path(tempfile.gettempdir()).glob("murmur-serve-*")) - before
        assert made == {folder} and folder.is_dir()  # where an operator finds what a crash left
        full = pytest.raises(QueueFull, match="busy with 2 jobs and uploads")
        with server.places.arriving(), server.places.arriving(), full, server.places.arriving():
            pass  # the operator's --max-queued-jobs: two places
    finally:
        server.close()
    assert not folder.exists()


@pytest.fixture(scope="module")
def random_vibevoice() -> Path:
    """A random-weight tiny VibeVoice checkpoint, built once into the repository's test cache."""
    from engine.testing.tiny import repo_cache, save_tiny_checkpoint

    folder = repo_cache() / "serve-vibevoice-random"
    if not (folder / "config.json").is_file():
        building = folder.with_name(f".building-{folder.name}-{os.getpid()}")
        save_tiny_checkpoint(building)
        building.rename(folder)
    return folder


def test_a_vibevoice_server_decodes_every_job_in_one_shared_batch_until_it_closes(random_vibevoice):
    from engine.serve.shared import SharedDecode

    before = set(threading.enumerate())
    server = Server.create("vibevoice", {"model": str(random_vibevoice), "device": "cpu"}, NO_SPEAKERS,
                           ServeConfig())  # fmt: skip
    try:
        assert server.model == f"VibeVoice-ASR {random_vibevoice}"
        assert isinstance(server.shared, SharedDecode)
        assert server.pipeline(JobOptions()).backend.shared is server.shared  # every job's chunks: one batch
        text = TestClient(create_app(server)).get("/metrics").text
        assert "\nmurmur_decode_steps_total 0\n" in text and "\nmurmur_rows_active 0\n" in text
        loops = set(threading.enumerate()) - before
        assert len(loops) == 1  # the one decode loop
    finally:
        server.close()
    assert not any(t.is_alive() for t in loops)
