"""The worker thread's transcribe and range jobs against a Murmur server, in this process: the real
`/v1/audio/transcriptions` app on uvicorn in a thread, whose jobs end with a known transcript
(`test_openai_shapes`' registries), so no model loads and a job takes well under a second. What the
window is told: each chunk's lines as they come, the transcript, a range's lines at the range's
times, the settings reaching the server, a cancel, a server's failure and a connection lost."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from qt_helpers import DEMO, wait_until

from app.jobs import LoadJob, RangeJob, TranscribeJob
from app.settings import TranscribeSettings
from app.worker import RunController
from engine.audio.io import load_audio
from engine.serve.app import create_app
from engine.types import Progress, Stage
from tests.app.test_worker_jobs import names, record, run
from tests.engine.live.test_record_remote_transcript import GatedRegistry
from tests.engine.serve.conftest import write_flac
from tests.engine.serve.test_openai_shapes import TRANSCRIPT, AppServer, InstantRegistry
from tests.engine.serve.test_realtime_route import running

pytest.importorskip("fastapi")


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's first 8 seconds (people speaking), 16 kHz mono FLAC."""
    demo = load_audio(DEMO, 16000)
    return write_flac(tmp_path_factory.mktemp("remote") / "clip.flac", demo.samples[: 8 * 16000])


@pytest.fixture
def controller(qapp) -> Iterator[RunController]:
    runner = RunController()
    yield runner
    runner.shutdown()


@contextmanager
def serving(tmp_path: Path, registry: InstantRegistry) -> Iterator[TranscribeSettings]:
    """The app on a loopback port, and settings that send the runs there."""
    (tmp_path / "server").mkdir()
    app = create_app(AppServer(folder=tmp_path / "server", registry=registry))
    with running(app) as url:
        base = url.replace("ws://", "http://").removesuffix("/v1/realtime")
        yield TranscribeSettings(run_on="server", server_url=base, diarizer="none", num_speakers=3)


def loaded(runner: RunController, events: list, path: Path, settings: TranscribeSettings) -> None:
    run(runner, events, LoadJob(path, settings))
    events.clear()


def decoding(events: list) -> list[Progress]:
    """The reports of the audio being decoded here (the upload to the server reports its stage too)."""
    shown = [args[0] for n, args in events if n == "progress"]
    return [p for p in shown if p.stage is Stage.LOAD and p.detail != "uploading"]


def outcome(events: list, name: str) -> tuple:
    return next(args for n, args in events if n == name)


def test_a_run_on_a_server_shows_each_chunks_lines_then_the_servers_transcript(controller, clip, tmp_path):
    registry = GatedRegistry()
    registry.gate.set()
    with serving(tmp_path, registry) as away:
        events = record(controller)
        loaded(controller, events, clip, away)
        lines: list[str] = []
        controller.worker.partial.connect(lambda chunk: lines.extend(s.text for s in chunk.segments))
        controller.worker.partial.connect(lambda chunk: events.append(("partial", (chunk,))))
        run(controller, events, TranscribeJob(away))
    assert names(events)[-2:] == ["idle", "finished"]
    [transcript] = outcome(events, "finished")
    assert [u.text for u in transcript.utterances] == ["Hello there.", "How are you?"]
    assert transcript.model.startswith(TRANSCRIPT.model) and transcript.speakers == TRANSCRIPT.speakers
    assert lines == ["Hello there.", "How are you?"]
    assert names(events).index("partial") < names(events).index("finished")
    [options] = registry.options
    assert options.diarizer == "none" and options.num_speakers == 3, options


def test_a_range_sent_to_a_server_comes_back_at_the_ranges_times(controller, clip, tmp_path):
    registry = GatedRegistry()
    registry.gate.set()
    with serving(tmp_path, registry) as away:
        events = record(controller)
        loaded(controller, events, clip, away)
        run(controller, events, RangeJob(away, 2.0, 7.0, ()))
    assert names(events)[-2:] == ["idle", "range_done"]
    assert not decoding(events)  # the audio prepared for the server is not decoded again
    shown = [args[0] for n, args in events if n == "progress"]
    assert [p.detail for p in shown if p.stage is Stage.LOAD][:1] == ["uploading"]  # the range's progress
    assert any(p.stage is Stage.INFER and p.partial is not None for p in shown)
    [done] = outcome(events, "range_done")
    assert (done.start, done.end) == (2.0, 7.0)
    assert [u.text for u in done.utterances] == ["Hello there.", "How are you?"]
    assert done.utterances[0].start == pytest.approx(2.3) and done.utterances[1].end == pytest.approx(6.25049)
    [options] = registry.options
    assert options.diarizer == "none" and options.num_speakers == 3
    assert registry.counts["done"] == 1


def test_a_range_whose_audio_was_never_prepared_is_loaded_for_the_server_and_sent(controller, clip, tmp_path):
    registry = GatedRegistry()
    registry.gate.set()
    with serving(tmp_path, registry) as away:
        events = record(controller)
        controller.worker.audio_loaded.connect(lambda _: controller.cancel())  # before speech is found
        run(controller, events, LoadJob(clip, TranscribeSettings()))
        assert names(events) == ["audio_loaded", "idle", "cancelled"]
        del events[:]
        run(controller, events, RangeJob(away, 1.0, 7.0, ()))
    assert decoding(events)  # decoded again, and said
    assert names(events)[-2:] == ["idle", "range_done"]
    [done] = outcome(events, "range_done")
    assert done.utterances[0].start == pytest.approx(1.3) and registry.counts["done"] == 1


@pytest.mark.parametrize("kind", ["transcribe", "range"])
def test_cancelling_a_job_on_a_server_ends_it_there_and_says_cancelled(controller, clip, tmp_path, kind):
    registry = GatedRegistry()
    with serving(tmp_path, registry) as away:
        events = record(controller)
        loaded(controller, events, clip, away)
        assert controller.start(TranscribeJob(away) if kind == "transcribe" else RangeJob(away, 1.0, 3.0, ()))
        assert registry.submitted.wait(30)
        controller.cancel()
        wait_until(lambda: "idle" in names(events) and not controller.busy, timeout=60)
        wait_until(lambda: registry.counts["cancelled"] == 1, timeout=30)
    assert names(events) == ["idle", "cancelled"] and registry.counts["done"] == 0


def test_a_server_that_fails_the_job_is_told_with_its_reason(controller, clip, tmp_path):
    registry = InstantRegistry(failure="the GPU ran out of memory")
    with serving(tmp_path, registry) as away:
        events = record(controller)
        loaded(controller, events, clip, away)
        run(controller, events, TranscribeJob(away))
        run(controller, events, RangeJob(away, 1.0, 3.0, ()), count=2)
    failures = [args for n, args in events if n == "failed"]
    assert names(events) == ["idle", "failed", "idle", "failed"] and len(failures) == 2
    for title, text in failures:
        assert title == "Transcription failed" and "the GPU ran out of memory" in text


def test_a_server_that_goes_away_mid_run_fails_the_run_in_words(controller, clip, tmp_path):
    registry = GatedRegistry()
    with serving(tmp_path, registry) as away:
        events = record(controller)
        loaded(controller, events, clip, away)
        assert controller.start(TranscribeJob(away))
        assert registry.submitted.wait(30)
    registry.gate.set()  # the server's job thread, left behind, ends too
    wait_until(lambda: "idle" in names(events) and not controller.busy, timeout=60)
    assert names(events) == ["idle", "failed"]
    title, text = outcome(events, "failed")
    assert title == "Transcription failed" and away.server_url in text, text


def test_a_clip_planned_here_is_planned_again_for_a_server_without_being_decoded_again(
    controller, clip, tmp_path
):
    registry = GatedRegistry()
    registry.gate.set()
    with serving(tmp_path, registry) as away:
        events = record(controller)
        loaded(controller, events, clip, TranscribeSettings())  # this computer's plan: speech, chunks
        run(controller, events, TranscribeJob(away))
    assert names(events) == ["prepared", "idle", "finished"] and not decoding(events)
    assert outcome(events, "prepared")[0].chunks == ()  # the server plans its own
    assert registry.counts["done"] == 1


def test_a_clip_whose_plan_was_cancelled_is_decoded_again_and_sent(controller, clip, tmp_path):
    registry = GatedRegistry()
    registry.gate.set()
    with serving(tmp_path, registry) as away:
        events = record(controller)
        controller.worker.audio_loaded.connect(lambda _: controller.cancel())  # before speech is found
        run(controller, events, LoadJob(clip, TranscribeSettings()))
        controller.worker.audio_loaded.disconnect()
        controller.worker.audio_loaded.connect(lambda *args: events.append(("audio_loaded", args)))
        del events[:]
        run(controller, events, TranscribeJob(away))
    assert names(events) == ["audio_loaded", "prepared", "idle", "finished"] and decoding(events)
    [audio], [prepared] = outcome(events, "audio_loaded"), outcome(events, "prepared")
    assert audio.path == clip and audio.recording is prepared.recording and audio.stream is None
    assert audio.envelope.duration == audio.recording.duration and 7.9 < audio.recording.duration < 8.1
