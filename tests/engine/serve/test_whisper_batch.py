"""The server's shared whisper calls (`whisper_batch`, `whisper_shared`) in process, with the real
bundled tiny.en model on pieces of the demo meeting (several chunks each)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from engine.audio.io import load_audio
from engine.backends.whisper import WhisperBackend, WhisperConfig
from engine.backends.whisper_decode import DecodeOptions
from engine.errors import Cancelled
from engine.pipeline import Pipeline, PipelineConfig, Prepared
from engine.serve.whisper_batch import RATE, WhisperBatcher
from engine.serve.whisper_shared import SharedWhisperBackend
from engine.speakers import SpeakerConfig
from engine.types import ChunkResult, Recording
from tests.engine.serve.conftest import ROOT

OPTIONS = DecodeOptions(language="en", beam_size=5, batch_size=2, hotwords=None)


@pytest.fixture(scope="module")
def model():
    return WhisperBackend().loaded()


@pytest.fixture(scope="module")
def prepared() -> list[Prepared]:
    """Three overlapping 65-second pieces of the demo meeting, cut into chunks (three each)."""
    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", RATE).samples
    pipeline = Pipeline.create("whisper", PipelineConfig(speakers=SpeakerConfig(diarizer="none")))
    pieces = [Recording(demo[s * RATE : (s + 65) * RATE].copy(), RATE) for s in (0, 25, 59)]
    return [pipeline.prepare(p) for p in pieces]


def words(results: list[ChunkResult]) -> list[tuple[int, str]]:
    """Every word of every chunk (a word's time may move by faster-whisper's rules that read the row
    before it in a call, as between two local runs batched differently)."""
    return [(r.chunk.index, w.text) for r in results for s in r.segments for w in s.words]


def run(backend, prepared: Prepared) -> list[ChunkResult]:
    return list(backend.transcribe(prepared.recording, prepared.chunks))


def shared_backend(model, batcher: WhisperBatcher) -> SharedWhisperBackend:
    backend = WhisperBackend(WhisperConfig(ramp=True))
    backend.attach(model)
    return SharedWhisperBackend(backend, batcher)


def test_concurrent_jobs_share_calls_and_each_gets_the_words_of_its_local_run(model, prepared):
    alone = WhisperBackend(WhisperConfig(ramp=True))
    alone.attach(model)
    expected = [words(list(alone.transcribe(p.recording, p.chunks))) for p in prepared]
    batcher = WhisperBatcher(model, batch_size=8)
    shared = shared_backend(model, batcher)
    try:
        with ThreadPoolExecutor(len(prepared)) as pool:
            futures = [
                pool.submit(lambda p: list(shared.transcribe(p.recording, p.chunks)), p) for p in prepared
            ]
            while batcher.source.jobs < len(prepared):  # every job has queued its chunks
                threading.Event().wait(0.01)
            batcher.start()
            got = [f.result() for f in futures]
    finally:
        batcher.stop()
    assert [words(g) for g in got] == expected
    assert all(expected)
    assert batcher.mixed >= 1  # a call carried rows of several jobs
    assert max(r.stats.batch_rows for g in got for r in g) > OPTIONS.batch_size  # more than one job's share


def test_a_lone_job_decodes_in_calls_of_its_own_batch_size(model, prepared):
    batcher = WhisperBatcher(model, batch_size=8).start()
    shared = shared_backend(model, batcher)
    many = prepared[0]
    try:
        results = list(shared.transcribe(many.recording, many.chunks))
    finally:
        batcher.stop()
    assert len(results) == len(many.chunks) >= 3
    assert max(r.stats.batch_rows for r in results) == OPTIONS.batch_size  # never more than its own share


def test_a_cancelled_job_leaves_the_calls_and_the_others_finish(model, prepared):
    alone = WhisperBackend(WhisperConfig(ramp=True))
    alone.attach(model)
    other = prepared[1]
    expected = words(list(alone.transcribe(other.recording, other.chunks)))
    batcher = WhisperBatcher(model, batch_size=8).start()
    shared = shared_backend(model, batcher)
    cancel = threading.Event()
    four = np.concatenate([prepared[0].recording.samples] * 4)  # 260 s: more chunks than two calls take
    doomed = Pipeline.create("whisper", PipelineConfig(speakers=SpeakerConfig(diarizer="none"))).prepare(
        Recording(four, RATE)
    )
    try:
        with ThreadPoolExecutor(1) as pool:
            survivor = pool.submit(lambda: list(shared.transcribe(other.recording, other.chunks)))
            job = shared.transcribe(doomed.recording, doomed.chunks, cancel)
            next(job)
            cancel.set()
            with pytest.raises(Cancelled):
                list(job)
            assert words(survivor.result()) == expected
    finally:
        batcher.stop()
    assert batcher.source.chunks_dropped >= 1  # its queued chunks never reached a call
    assert batcher.source.jobs == 0
