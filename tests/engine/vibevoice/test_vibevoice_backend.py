"""The VibeVoice backend in the pipeline: the trained tiny model gives back exactly what it learned."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from engine.backends import create_backend
from engine.backends.base import Backend
from engine.backends.vibevoice import VibeVoiceBackend, VibeVoiceConfig
from engine.errors import Cancelled
from engine.pipeline import Pipeline, PipelineConfig, single_chunk
from engine.types import Chunk, FinishReason, Recording

TIME_TOLERANCE = 0.006  # the model writes times with 2 decimals


@pytest.fixture(scope="module")
def backend(trained_model) -> VibeVoiceBackend:
    return VibeVoiceBackend(VibeVoiceConfig(model=str(trained_model), device="cpu", batch_size=3))


def assert_matches_reference(result, reference) -> None:
    assert result.finish_reason is FinishReason.EOS, result.raw_text
    got = [(s.text, s.speaker, s.flags) for s in result.segments]
    assert got == [(r.text, r.speaker, ()) for r in reference]
    for got, want in zip(result.segments, reference, strict=True):
        assert abs(got.start - want.start) <= TIME_TOLERANCE and abs(got.end - want.end) <= TIME_TOLERANCE


def test_it_is_a_24khz_speaker_labelling_backend_that_loads_on_first_use():
    backend = create_backend("vibevoice", model="/no/model/needed/yet")
    assert isinstance(backend, Backend) and backend.name == "vibevoice"
    assert backend.sample_rate == 24000 and backend.labels_speakers
    assert backend.default_chunk_seconds == 300 and backend.max_chunk_seconds == 3600
    assert backend.describe() == "VibeVoice-ASR /no/model/needed/yet"


@pytest.mark.parametrize("single_pass", [True, False], ids=["single", "chunked"])
def test_the_trained_model_transcribes_its_clips_exactly(backend, trained_clips, single_pass):
    pipeline = Pipeline(backend, PipelineConfig(single_pass=single_pass))
    for path, reference in trained_clips:
        prepared = pipeline.prepare(path)
        (chunk,) = prepared.chunks
        assert (chunk.start, chunk.end) == (0.0, prepared.recording.duration)  # the whole clip
        (result,) = pipeline.infer(prepared, lambda p: None, None)
        assert_matches_reference(result, reference)
        assert result.raw_text.startswith("assistant\n[")
        stats = result.stats
        assert stats.prompt_tokens > 7.5 * chunk.duration and stats.generated_tokens > 20
        assert stats.prefill_seconds > 0 and stats.decode_seconds > 0


def test_a_batch_of_clips_gives_each_its_own_result(backend, trained_clips):
    recordings = [Pipeline(backend).load(path) for path, _ in trained_clips]
    joined = Recording(np.concatenate([r.samples for r in recordings]), 24000)
    chunks, start = [], 0.0
    for i, r in enumerate(recordings):
        chunks.append(Chunk(i, start, start + r.duration))
        start += r.duration
    results = {r.chunk.index: r for r in backend.transcribe(joined, chunks)}
    for i, (_, reference) in enumerate(trained_clips):
        assert_matches_reference(results[i], reference)


def test_the_same_file_gives_the_same_transcript_twice(backend, trained_clips):
    pipeline = Pipeline(backend, PipelineConfig(single_pass=True))
    path, _ = trained_clips[0]
    first, second = pipeline.run(path), pipeline.run(path)
    assert first.utterances == second.utterances and first.utterances


def test_a_chunk_without_samples_gives_an_empty_result(backend):
    recording = Recording(np.zeros(24000, np.float32), 24000)
    (result,) = backend.transcribe(recording, [Chunk(0, 0.5, 0.5)])
    assert result.segments == () and result.finish_reason is FinishReason.EOS


def test_cancel_stops_before_decoding(backend):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        list(backend.transcribe(Recording(np.zeros(24000, np.float32), 24000), [Chunk(0, 0, 1)], cancel))


def test_single_pass_refuses_recordings_longer_than_an_hour():
    hour_and_a_second = Recording(np.zeros(3601 * 24000, np.float32), 24000)  # zero pages: no real memory
    with pytest.raises(ValueError, match="longer than the 1:00:00 a single pass can take"):
        single_chunk(hour_and_a_second, [], VibeVoiceBackend.max_chunk_seconds)


def test_audio_at_another_rate_is_refused(backend):
    with pytest.raises(ValueError, match="24000 Hz"):
        list(backend.transcribe(Recording(np.zeros(16000, np.float32), 16000), [Chunk(0, 0, 1)]))


def test_murmurs_decode_engine_is_interchangeable_with_the_reference(trained_model, trained_clips):
    pytest.importorskip("engine.decode.engine")
    backend = VibeVoiceBackend(VibeVoiceConfig(model=str(trained_model), device="cpu", engine="murmur"))
    pipeline = Pipeline(backend, PipelineConfig(single_pass=True))
    for path, reference in trained_clips:
        (result,) = pipeline.infer(pipeline.prepare(path), lambda p: None, None)
        assert_matches_reference(result, reference)
