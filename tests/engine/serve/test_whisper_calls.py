"""The server's shared whisper calls running (`whisper_batch.WhisperBatcher` started), with the
bundled tiny.en model on a few seconds of the demo meeting: what each job gets back from a call
it shares with another job, what a failed call does to its jobs and to the next call, a cancel
while waiting, and a stop that leaves no thread behind. Short clips, so mutant runs stay fast."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import numpy as np
import pytest

from engine.audio.io import load_audio
from engine.backends.whisper import WhisperBackend, WhisperConfig
from engine.backends.whisper_decode import DecodeOptions, batched_clips, replicas
from engine.errors import Cancelled
from engine.serve.whisper_batch import RATE, Decoded, Ticket, WhisperBatcher, clips_of
from tests.engine.serve.conftest import ROOT

OPTIONS = DecodeOptions(language="en", beam_size=1, batch_size=2, hotwords=None)
# one job's clips and another's (seconds of the recording), each starting as a sentence starts
FIRST = [(4.3, 7.5), (10.0, 14.0)]
SECOND = [(20.2, 24.0)]


@pytest.fixture(scope="module")
def model():
    """One lane (one call at a time), so what a call takes does not depend on thread timing."""
    return WhisperBackend(WhisperConfig(cpu_lanes=1, cpu_threads=2)).loaded()


@pytest.fixture(scope="module")
def meeting() -> np.ndarray:
    return load_audio(ROOT / "resources" / "demo" / "meeting.flac", RATE).samples[: 30 * RATE]


def alone(model, samples: np.ndarray, clips: list[tuple[float, float]]) -> list[list[tuple[float, str]]]:
    """Each clip's segments (start, text) decoded in one call straight from its recording, as a
    local run decodes them."""
    from faster_whisper import BatchedInferencePipeline

    found, _ = batched_clips(BatchedInferencePipeline(model=model), samples, clips, OPTIONS)
    return [[(s.start, s.text) for s in segments] for segments in found]


def said(decoded: Decoded) -> list[tuple[float, str]]:
    return [(s.start, s.text) for s in decoded.segments]


def fetched(ticket: Ticket, clip: int) -> Decoded:
    """The clip's result, or a failed test (not a hang) when no call ever delivers it (a call of
    these clips takes a few seconds)."""
    gave_up = threading.Event()
    timer = threading.Timer(60, gave_up.set)
    timer.start()
    try:
        return ticket.get(clip, gave_up)
    finally:
        timer.cancel()


def same(got: Decoded, expected: list[tuple[float, str]], clip: tuple[float, float]) -> bool:
    """The words of the local decode, and in the recording's time: the first starts as the clip
    does (a time may move a little by what faster-whisper reads of the row before it, never by a
    whole second)."""
    starts = [s for s, _ in said(got)]
    return [t for _, t in said(got)] == [t for _, t in expected] and clip[0] <= starts[0] < clip[0] + 1


def test_two_jobs_in_one_call_each_get_their_own_words_at_their_own_times(model, meeting):
    batcher = WhisperBatcher(model, batch_size=4)  # both jobs queued before the call is taken
    first = batcher.submit(clips_of(meeting, FIRST, 0, OPTIONS))
    second = batcher.submit(clips_of(meeting, SECOND, 1, OPTIONS))
    began = time.perf_counter()
    batcher.start()
    try:
        got = [fetched(first, 1), fetched(first, 0), fetched(second, 0)]
        elapsed = time.perf_counter() - began
        lone = fetched(batcher.submit(clips_of(meeting, SECOND, 2, OPTIONS)), 0)
    finally:
        batcher.stop()
    expected = alone(model, meeting, [FIRST[1], FIRST[0], SECOND[0]])
    clips = [FIRST[1], FIRST[0], SECOND[0]]
    assert all(expected) and all(same(*case) for case in zip(got, expected, clips, strict=True))
    assert same(lone, expected[2], SECOND[0])
    assert [(d.rows, d.language) for d in [*got, lone]] == [(3, "en")] * 3 + [(1, "en")]
    assert all(0 < d.seconds * d.rows <= elapsed for d in got)  # the call's time shared out, not multiplied
    assert [(name, value) for name, _, _, value in batcher.metrics()][:4] == [
        ("murmur_whisper_calls_total", 2), ("murmur_whisper_rows_total", 4),
        ("murmur_whisper_rows_per_call", 2.0), ("murmur_whisper_mixed_calls_total", 1),
    ]  # fmt: skip


def test_failed_calls_fail_their_jobs_and_the_next_call_still_decodes(model, meeting, caplog):
    batcher = WhisperBatcher(model, batch_size=4).start()
    try:
        for job in (0, 1):
            broken = batcher.submit(clips_of(meeting, SECOND, job, replace(OPTIONS, beam_size=0)))
            with pytest.raises(ValueError, match="beam size must be > 0"):
                fetched(broken, 0)
        later = fetched(batcher.submit(clips_of(meeting, SECOND, 2, OPTIONS)), 0)
    finally:
        batcher.stop()
    assert same(later, alone(model, meeting, SECOND)[0], SECOND[0])
    assert dict((n, v) for n, _, _, v in batcher.metrics())["murmur_decode_restarts_total"] == 2
    assert batcher.calls == 1  # a failed call is counted as a restart, not as a call
    failed = [r for r in caplog.records if r.name == "engine.serve.whisper_batch"]
    assert [(r.levelname, r.getMessage()) for r in failed] == [("ERROR", "a batched whisper call failed")] * 2
    assert all("beam size must be > 0" in r.exc_text for r in failed)  # the operator sees why


def test_a_job_waiting_for_its_results_stops_when_cancelled_and_its_clips_go(meeting):
    batcher = WhisperBatcher(None, batch_size=4)  # never started: no call will come
    ticket = batcher.submit(clips_of(meeting, FIRST, 0, OPTIONS))
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    with pytest.raises(Cancelled):
        ticket.get(0, cancel)
    ticket.close()
    assert batcher.source.chunks_dropped == 2 and batcher.source.jobs == 0


def test_results_are_fetched_by_clip_in_any_order_and_an_error_ends_the_wait(meeting):
    batcher = WhisperBatcher(None, batch_size=4)
    ticket = batcher.submit(clips_of(meeting, FIRST, 0, OPTIONS))
    ticket.deliver(Decoded(1, (), "en", 0.1, 2))
    ticket.deliver(Decoded(0, (), "de", 0.1, 2))
    assert [fetched(ticket, 0).language, fetched(ticket, 1).language] == ["de", "en"]
    ticket.deliver(RuntimeError("the call failed"))
    with pytest.raises(RuntimeError, match="the call failed"):
        fetched(ticket, 0)


def test_one_thread_per_lane_runs_while_started_and_none_after_stop(model):
    before = set(threading.enumerate())
    batcher = WhisperBatcher(model, batch_size=1).start()  # one row a call is a batch size
    lanes = set(threading.enumerate()) - before
    assert all(t.daemon for t in lanes)  # a lane never keeps the server's process from exiting
    batcher.stop()
    assert len(lanes) == max(1, replicas(model)) and not any(t.is_alive() for t in lanes)
    with pytest.raises(ValueError, match="batch size must be at least 1, got 0"):
        WhisperBatcher(model, batch_size=0)


def test_a_model_of_two_cpu_replicas_decodes_in_two_lanes():
    two = WhisperBackend(WhisperConfig(device="cpu", cpu_lanes=2, cpu_threads=2)).loaded()
    before = set(threading.enumerate())
    batcher = WhisperBatcher(two, batch_size=4).start()
    lanes = set(threading.enumerate()) - before
    batcher.stop()
    assert replicas(two) == 2 and len(lanes) == 2  # one lane would leave half the CPU idle


def test_stop_ends_the_lanes_after_their_call_and_every_job_still_waiting_is_told(model, meeting):
    batcher = WhisperBatcher(model, batch_size=4)
    many = [(4.3 + k, 5.3 + k) for k in range(6)]  # one job's six clips: three calls of two rows
    waiting = batcher.submit(clips_of(meeting, many, 0, OPTIONS))
    before = set(threading.enumerate())
    batcher.start()
    lanes = set(threading.enumerate()) - before
    batcher.stop()
    assert not any(t.is_alive() for t in lanes)
    assert batcher.calls <= 1  # the call under way, if any, and no more
    # told by the batcher, not by the test's own deadline ("cancelled by the user")
    with pytest.raises(Cancelled, match=r"^the server is stopping$"):
        fetched(waiting, 5)  # the last clip: never decoded
    late = batcher.submit(clips_of(meeting, SECOND, 1, OPTIONS))
    with pytest.raises(Cancelled, match=r"^the server is stopping$"):
        fetched(late, 0)
    assert batcher.source.jobs == 0  # nothing left queued for a lane that will never come
