"""The pipeline the CLI and GUI share: staged progress, early chunk results, cancel, model reuse."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from engine.errors import Cancelled, ModelLoadError
from engine.pipeline import Pipeline, PipelineConfig
from engine.progress import EtaTracker, StageTimes, format_clock
from engine.types import Progress, Recording, SpeechSegment, Stage

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "meeting.flac"


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    return Pipeline.create("whisper", PipelineConfig(chunk_seconds=30))


@pytest.fixture(scope="module")
def prepared(pipeline):
    return pipeline.prepare(DEMO)


def test_prepare_shows_speech_and_chunks_before_any_inference(prepared):
    assert prepared.recording.sample_rate == 16000
    assert 120 < prepared.recording.duration < 130
    assert prepared.speech and prepared.chunks
    assert all(c.duration <= 30 for c in prepared.chunks)


def test_progress_goes_through_the_stages_in_order_with_chunk_results_as_they_finish(pipeline):
    seen: list[Progress] = []
    transcript = pipeline.run(DEMO, seen.append)
    stages = list(dict.fromkeys(p.stage for p in seen))
    assert stages == [Stage.LOAD, Stage.VAD, Stage.CHUNK, Stage.INFER, Stage.SPEAKERS, Stage.STITCH]
    partial = [p.partial for p in seen if p.partial is not None]
    assert len(partial) == len(transcript.chunks)
    assert transcript.utterances and transcript.model == "faster-whisper tiny.en"


def test_cancel_during_inference_raises_cancelled(pipeline, prepared):
    cancel = threading.Event()

    def on_progress(p: Progress) -> None:
        if p.stage is Stage.INFER:
            cancel.set()

    with pytest.raises(Cancelled):
        pipeline.transcribe(prepared, on_progress, cancel)


def test_an_unknown_whisper_model_offline_is_a_clear_load_error(prepared):
    broken = Pipeline.create("whisper", model="no-such-model-xyz")
    with pytest.raises(ModelLoadError, match="not available offline"):
        broken.transcribe(prepared)


def test_unknown_backend_or_option_is_rejected():
    with pytest.raises(ValueError, match="unknown backend"):
        Pipeline.create("nope")
    with pytest.raises(ValueError, match="no option"):
        Pipeline.create("whisper", eviction="both")


def test_eta_is_extrapolated_from_the_rate_within_a_stage():
    now = [0.0]
    eta = EtaTracker(clock=lambda: now[0])
    assert eta.update(Progress(Stage.INFER, 0, 10)) is None
    now[0] = 10.0
    assert eta.update(Progress(Stage.INFER, 5, 10)) == pytest.approx(10.0)
    assert eta.update(Progress(Stage.STITCH, 0, 1)) is None  # a new stage starts over
    assert format_clock(3725) == "1:02:05" and format_clock(65) == "1:05"


def test_stage_times_come_from_the_progress_reports():
    now = [0.0]
    times = StageTimes(clock=lambda: now[0])
    for t, stage in ((0, Stage.LOAD), (1, Stage.VAD), (1.5, Stage.VAD), (3, Stage.INFER), (10, Stage.STITCH)):
        now[0] = t
        times(Progress(stage, 0, 1))
    now[0] = 10.25
    times.stop()
    assert times.seconds() == {Stage.LOAD: 1, Stage.VAD: 2, Stage.INFER: 7, Stage.STITCH: 0.25}
    assert times.render().startswith("load 1.00 s · vad 2.00 s")


def test_chunks_larger_than_the_model_takes_are_refused():
    with pytest.raises(ValueError, match="at most 30 s"):
        _ = Pipeline.create("whisper", PipelineConfig(chunk_seconds=300)).chunking


def test_single_pass_refuses_recordings_longer_than_the_model_takes(pipeline):
    single = Pipeline(pipeline.backend, PipelineConfig(single_pass=True))
    with pytest.raises(ValueError, match="single pass"):
        single.prepare(DEMO)  # 2 minutes, but whisper takes 30 s in one pass


def test_speech_found_elsewhere_is_planned_into_chunks_the_model_takes_or_one_in_single_pass(
    pipeline, prepared
):
    # catches: a live recording's speech planned into chunks longer than the model takes, speech
    # dropped from the plan, a long run cut at its half instead of its quietest point, the
    # detector's pauses dropped, single-pass mode ignored (the recording as 30 s chunks)
    plan = pipeline.plan(prepared.recording, prepared.speech)
    assert plan.recording is prepared.recording and plan.speech == prepared.speech
    assert len(plan.chunks) > 1 and all(c.duration <= 30 for c in plan.chunks)
    planned = sum(s.end - s.start for c in plan.chunks for s in c.speech)
    assert planned == pytest.approx(sum(s.end - s.start for s in prepared.speech))
    # one run of speech longer than a chunk: cut at the quietest point of its second half, not
    # at the half itself
    [first, second] = pipeline.plan(prepared.recording, (SpeechSegment(0.0, 40.0),)).chunks
    room = pipeline.chunking.max_seconds - 2 * pipeline.chunking.pad_seconds
    cut = first.speech[-1].end
    assert cut == second.speech[0].start and room / 2 < cut < room
    # pauses inside speech (whisper's detector reports them) let a chunk fill its window
    runs = (SpeechSegment(1, 10), SpeechSegment(12, 40), SpeechSegment(42, 50))
    filled = pipeline.plan(prepared.recording, runs, [20.0, 24.5, 28.5, 45.0]).chunks
    assert len(filled) < len(pipeline.plan(prepared.recording, runs).chunks)
    short = Recording(prepared.recording.samples[: 20 * 16000], 16000)
    speech = tuple(s for s in prepared.speech if s.end <= 20)
    single = Pipeline(pipeline.backend, PipelineConfig(single_pass=True))
    [whole] = single.plan(short, speech).chunks
    assert (whole.start, whole.end, whole.speech) == (0.0, short.duration, speech)


@pytest.mark.slow
def test_diarizing_alongside_inference_gives_the_same_transcript(pipeline, prepared):
    apart = Pipeline(pipeline.backend, PipelineConfig(chunk_seconds=30, speakers_alongside=False))
    together, alone = pipeline.transcribe(prepared), apart.transcribe(prepared)
    assert len({u.speaker for u in together.utterances}) >= 3
    assert together.utterances == alone.utterances
