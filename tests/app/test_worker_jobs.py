"""The worker thread's jobs on a short clip of the demo, in this process: what each job reports and
in which order, the plan found here, refusals and failures in the user's words, cancelling, and a
server that cannot be reached reported before any audio is prepared again."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QThread
from qt_helpers import DEMO, two_stream_file, wait_until

from app.engine_process import EngineError, EngineStopped
from app.jobs import EngineJob, LoadJob, RangeJob, TranscribeJob
from app.settings import TranscribeSettings
from app.worker import PROGRESS_INTERVAL, RunController, TranscriptionWorker, error_message
from engine.audio.io import load_audio
from engine.errors import ModelOutputError, MurmurError, OutOfMemoryError, ServerError
from engine.types import Chunk, Progress, SpeechSegment, Stage
from tests.engine.serve.conftest import write_flac

OUTCOMES = ("audio_loaded", "prepared", "finished", "range_done", "engine_ready", "cancelled", "idle")


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's first 8 seconds (people speaking), 16 kHz mono FLAC."""
    demo = load_audio(DEMO, 16000)
    return write_flac(tmp_path_factory.mktemp("worker") / "clip.flac", demo.samples[: 8 * 16000])


@pytest.fixture
def controller(qapp) -> Iterator[RunController]:
    runner = RunController()
    yield runner
    runner.shutdown()


def record(controller: RunController) -> list[tuple[str, tuple]]:
    events: list[tuple[str, tuple]] = []
    w = controller.worker
    for name in OUTCOMES:
        getattr(w, name).connect(lambda *args, n=name: events.append((n, args)))
    w.failed.connect(lambda title, text: events.append(("failed", (title, text))))
    w.progress.connect(lambda p: events.append(("progress", (p, QThread.currentThread()))))
    return events


def names(events: list[tuple[str, tuple]]) -> list[str]:
    return [n for n, _ in events if n != "progress"]


def run(controller: RunController, events: list, job: object, count: int = 1) -> None:
    assert controller.start(job)
    wait_until(lambda: names(events).count("idle") >= count and not controller.busy, timeout=120)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_clip_loads_then_its_speech_and_chunks_are_found_reported_from_the_worker(controller, clip):
    events = record(controller)
    run(controller, events, LoadJob(clip, TranscribeSettings(), stream=0))
    assert names(events) == ["audio_loaded", "idle", "prepared"]
    loaded = events[[n for n, _ in events].index("audio_loaded")][1][0]
    assert loaded.path == clip and loaded.stream == 0 and 7.9 < loaded.recording.duration < 8.1
    assert loaded.envelope.duration == loaded.recording.duration
    prepared = events[-1][1][0]
    assert prepared.recording is loaded.recording and prepared.speech and prepared.chunks
    progress = [args for n, args in events if n == "progress"]
    assert progress and all(thread is not controller.thread() for _, thread in progress)
    assert {p.stage for p, _ in progress} >= {Stage.LOAD, Stage.VAD, Stage.CHUNK}  # decoding and planning


def test_a_clip_for_a_server_is_loaded_here_at_the_uploads_rate_and_planned_there(controller, clip):
    events = record(controller)
    away = TranscribeSettings(run_on="server", server_url=f"http://127.0.0.1:{closed_port()}")
    run(controller, events, LoadJob(clip, away))
    assert names(events) == ["audio_loaded", "idle", "prepared"]
    prepared = events[-1][1][0]
    assert prepared.recording.sample_rate == 16000 and prepared.speech == () and prepared.chunks == ()
    run(controller, events, LoadJob(clip, TranscribeSettings()), count=2)  # this computer again: planned
    assert names(events)[-1] == "prepared" and events[-1][1][0].chunks


def test_the_audio_stream_picked_is_the_one_decoded_here_and_for_a_server(controller, tmp_path):
    # catches: the stream dropped on the way to the decoder (the file's default, silent stream
    # shown), or a pipeline kept for another stream of the same file
    path = two_stream_file(tmp_path)
    events = record(controller)
    away = TranscribeSettings(run_on="server", server_url=f"http://127.0.0.1:{closed_port()}")
    jobs = [LoadJob(path, TranscribeSettings(), stream=1), LoadJob(path, TranscribeSettings()),
            LoadJob(path, away, stream=1)]  # fmt: skip
    peaks = []
    for count, job in enumerate(jobs, start=1):
        run(controller, events, job, count=count)
        loaded = [args[0] for n, args in events if n == "audio_loaded"][-1]
        assert loaded.stream == job.stream
        peaks.append(float(abs(loaded.recording.samples).max()))
    assert peaks[0] > 0.1 and peaks[1] == 0.0 and peaks[2] > 0.1  # speech, the silent default, speech


def test_known_speech_is_not_looked_for_again_its_chunks_planned_unless_known_too(controller, clip):
    # catches: the speech a live recording found looked for again when its file opens (seconds of
    # the window's interpreter after a long recording); its chunks left unplanned (none drawn); a
    # project's own chunks planned anew
    events = record(controller)
    speech = (SpeechSegment(1.0, 2.5), SpeechSegment(4.0, 6.0))
    run(controller, events, LoadJob(clip, TranscribeSettings(), speech=speech))
    prepared = events[-1][1][0]
    assert names(events)[-1] == "prepared" and prepared.speech == speech
    [chunk] = prepared.chunks  # both in one chunk, padded, as planning found speech makes it
    assert chunk.speech == speech and chunk.start < 1.0 and chunk.end > 6.0
    assert not any(args[0].stage == Stage.VAD for n, args in events if n == "progress")
    loaded = next(args[0] for n, args in events if n == "audio_loaded")
    assert prepared.recording is loaded.recording  # the audio just decoded, ready to transcribe
    known = (Chunk(0, 0.5, 3.0, speech[:1]), Chunk(1, 3.5, 6.5, speech[1:]))
    run(controller, events, LoadJob(clip, TranscribeSettings(), speech=speech, chunks=known), count=2)
    kept = events[-1][1][0]
    assert kept.chunks == known and kept.speech == speech
    assert kept.recording is [args[0] for n, args in events if n == "audio_loaded"][-1].recording


def test_known_speech_of_a_file_for_a_server_is_kept_and_its_chunks_left_to_the_server(controller, clip):
    # catches: a recording made while the settings say "a Murmur server" failing to open after Stop
    # (the server's pipeline had no planning of speech found elsewhere)
    events = record(controller)
    speech = (SpeechSegment(1.0, 2.5),)
    away = TranscribeSettings(run_on="server", server_url=f"http://127.0.0.1:{closed_port()}")
    run(controller, events, LoadJob(clip, away, speech=speech))
    prepared = events[-1][1][0]
    assert names(events)[-1] == "prepared" and prepared.speech == speech and prepared.chunks == ()
    loaded = next(args[0] for n, args in events if n == "audio_loaded")
    assert prepared.recording is loaded.recording  # what goes up when the run starts


def test_a_second_job_waits_and_a_cancelled_load_does_not_cancel_the_next(controller):
    events = record(controller)
    assert controller.start(LoadJob(DEMO, TranscribeSettings()))
    assert not controller.start(LoadJob(DEMO, TranscribeSettings())) and controller.busy
    controller.cancel()
    wait_until(lambda: "idle" in names(events) and not controller.busy, timeout=120)
    assert names(events) in (["idle", "cancelled"], ["audio_loaded", "idle", "cancelled"])
    run(controller, events, LoadJob(DEMO, TranscribeSettings()), count=2)
    assert names(events)[-1] == "prepared"


def test_transcribing_or_a_range_before_a_recording_is_open_is_refused_in_words(controller):
    events = record(controller)
    run(controller, events, TranscribeJob(TranscribeSettings()))
    run(controller, events, RangeJob(TranscribeSettings(), 1.0, 2.0, ()), count=2)
    refusal = ("failed", ("Cannot open this file", "open a recording before transcribing"))
    assert [e for e in events if e[0] == "failed"] == [refusal, refusal]
    assert names(events) == ["idle", "failed", "idle", "failed"]


def test_a_server_that_cannot_be_reached_is_said_before_the_audio_is_prepared_again(controller, clip):
    events = record(controller)
    run(controller, events, LoadJob(clip, TranscribeSettings()))
    url = f"http://127.0.0.1:{closed_port()}"
    away = TranscribeSettings(run_on="server", server_url=url)
    events.clear()
    run(controller, events, TranscribeJob(away))
    run(controller, events, RangeJob(away, 1.0, 3.0, ()), count=2)
    failures = [args for n, args in events if n == "failed"]
    assert len(failures) == 2 and names(events) == ["idle", "failed", "idle", "failed"]
    for title, text in failures:
        assert title == "Transcription failed" and f"cannot reach the Murmur server at {url}" in text


def test_a_run_on_this_computer_says_the_engine_is_starting_and_can_be_cancelled_meanwhile(controller, clip):
    events = record(controller)
    run(controller, events, LoadJob(clip, TranscribeSettings()))
    starting = []

    def on_progress(progress: Progress) -> None:
        if progress.detail == "starting the engine":
            starting.append(progress)
            controller.cancel()  # while the engine process starts

    controller.worker.progress.connect(on_progress)
    run(controller, events, TranscribeJob(TranscribeSettings()), count=2)
    assert [(p.stage, p.completed, p.total) for p in starting] == [(Stage.LOAD, 0, 1)]
    assert names(events)[-2:] == ["idle", "cancelled"]
    run(controller, events, EngineJob(TranscribeSettings()), count=3)  # Restart Engine, cancelled too
    assert [(p.stage, p.completed, p.total) for p in starting] == [(Stage.LOAD, 0, 1)] * 2  # said alike
    assert names(events)[-2:] == ["idle", "cancelled"]
    assert not controller.worker.engine.running()


def test_a_failure_nobody_expected_is_reported_and_logged_and_the_thread_goes_on(controller, clip, caplog):
    events = record(controller)
    with caplog.at_level(logging.ERROR, logger="app.worker"):
        run(controller, events, LoadJob(None, TranscribeSettings()))  # type: ignore[arg-type]
    title, text = next(args for n, args in events if n == "failed")
    assert title == "Unexpected error" and text.startswith("TypeError: ")
    assert "unexpected failure in a background job" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="app.worker"):
        run(controller, events, LoadJob(clip.with_name("missing.flac"), TranscribeSettings()), count=2)
    assert names(events)[-1] == "failed" and caplog.text == ""  # an expected failure is not logged


def test_each_failure_has_a_title_that_names_it():
    assert error_message(EngineStopped("gone")) == ("The engine stopped", "gone")
    assert error_message(EngineError("no")) == ("The engine could not start", "no")
    assert error_message(ModelOutputError("odd")) == ("The model's output could not be read", "odd")
    assert error_message(OutOfMemoryError("full")) == ("Out of memory", "full")
    assert error_message(ServerError("down")) == ("Transcription failed", "down")
    assert error_message(MurmurError("m")) == ("Transcription failed", "m")
    memory = error_message(MemoryError())
    assert memory == (
        "Out of memory",
        "The computer ran out of memory. Try a smaller batch size or chunk size.",
    )
    assert error_message(ValueError("v")) == ("These settings cannot be used", "v")
    assert error_message(RuntimeError("boom")) == ("Unexpected error", "RuntimeError: boom")


def test_progress_is_reported_at_each_new_stage_and_every_chunk_but_thinned_within_a_stage(qapp):
    worker = TranscriptionWorker(threading.Event())
    shown: list[Progress] = []
    partials: list[object] = []
    worker.progress.connect(shown.append)
    worker.partial.connect(partials.append)
    worker._report(Progress(Stage.LOAD, 0, 1, "loading"))
    worker._report(Progress(Stage.VAD, 0, 10, "speech"))
    assert [p.stage for p in shown] == [Stage.LOAD, Stage.VAD]
    started = time.monotonic()
    for i in range(2000):
        worker._report(Progress(Stage.VAD, i, 2000, "speech"))
    spent = time.monotonic() - started
    within = len(shown) - 2
    assert within <= spent / PROGRESS_INTERVAL + 1  # bug: every report sent (2000)
    chunk = object()
    worker._report(Progress(Stage.VAD, 5, 10, "speech", partial=chunk))
    assert partials == [chunk] and shown[-1].partial is chunk  # a chunk's result is never held back


def test_a_jobs_first_progress_is_shown_even_right_after_the_same_stage_was(qapp, clip):
    worker = TranscriptionWorker(threading.Event())
    shown: list[Progress] = []
    worker.progress.connect(shown.append)
    worker.run(LoadJob(clip, TranscribeSettings()))  # the pipeline built once
    worker._report(Progress(Stage.LOAD, 1, 1, "loaded"))  # the last job ended loading
    shown.clear()
    worker.run(LoadJob(clip, TranscribeSettings()))
    assert shown and shown[0].stage == Stage.LOAD  # bug: held back as within the last job's stage


def test_the_engine_thread_is_named_and_ends_at_shutdown(qapp):
    controller = RunController()
    thread = controller.worker.thread()
    assert thread.objectName() == "murmur-engine" and thread.isRunning() and not controller.busy
    controller.shutdown()
    assert thread.isFinished()
