"""Whisper on a CPU decodes in lanes: calls side by side, one thread each, results in chunk order
and the same words as one lane; a failure or a cancel leaves no decode running."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
import soundfile as sf

from engine.backends.whisper import WhisperConfig, load_model
from engine.backends.whisper_decode import DecodeOptions, decode_fast, replicas
from engine.backends.whisper_lanes import ahead, available_cores, cpu_plan
from engine.errors import Cancelled
from engine.types import Chunk, Recording, SpeechSegment

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "meeting.flac"


class Tracked:
    """Work that notes which items started and how many run at once."""

    def __init__(self, fail_at: int | None = None, meet: int = 0) -> None:
        self.started: list[int] = []
        self.running = self.most = 0
        self.lock = threading.Lock()
        self.fail_at = fail_at
        self.meeting = threading.Barrier(meet, timeout=30) if meet else None

    def __call__(self, item: int) -> int:
        with self.lock:
            self.started.append(item)
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            if self.meeting is not None and item < self.meeting.parties:
                self.meeting.wait()  # breaks (and fails the test) unless these items run together
            if item == self.fail_at:
                raise RuntimeError(f"item {item} failed")
            return item * 10
        finally:
            with self.lock:
                self.running -= 1


def test_work_runs_in_lanes_side_by_side_and_comes_back_in_order():
    work = Tracked(meet=2)
    assert list(ahead(work, range(9), lanes=2)) == [k * 10 for k in range(9)]
    assert work.most == 2 and sorted(work.started) == list(range(9))


def test_one_lane_is_a_plain_loop_in_the_callers_thread():
    seen = []
    assert list(ahead(lambda k: seen.append(threading.current_thread()) or k, range(3), lanes=1)) == [0, 1, 2]
    assert seen == [threading.current_thread()] * 3


def test_a_failure_stops_the_rest_from_starting_and_reaches_the_caller():
    work = Tracked(fail_at=1)
    with pytest.raises(RuntimeError, match="item 1 failed"):
        list(ahead(work, range(20), lanes=2))
    assert max(work.started) <= 3  # two lanes and one queued at most, never the other 16
    assert work.running == 0


def test_a_caller_that_stops_early_leaves_nothing_running():
    work = Tracked()
    results = ahead(work, range(20), lanes=2)
    assert next(results) == 0
    results.close()
    assert work.running == 0 and max(work.started) <= 3
    assert not [t for t in threading.enumerate() if t.name.startswith("whisper-lane")]


def test_a_cpu_gets_one_single_thread_lane_per_core_and_accurate_one_lane_with_them_all():
    assert cpu_plan(0, 0, "fast", cores=2) == (2, 1)
    assert cpu_plan(0, 0, "fast", cores=1) == (1, 1)
    assert cpu_plan(0, 0, "fast", cores=16) == (4, 1)  # CTranslate2's own default: 4 threads
    assert cpu_plan(8, 0, "fast", cores=16) == (4, 2)
    assert cpu_plan(0, 0, "accurate", cores=2) == (1, 2)
    assert cpu_plan(6, 3, "fast", cores=2) == (3, 2)  # chosen by the user: kept
    assert cpu_plan(1, 0, "fast", cores=8) == (1, 1)


def test_omp_num_threads_bounds_the_cores_used(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert available_cores() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "not a number")
    assert available_cores() >= 1


def test_a_containers_cpu_quota_bounds_the_cores_used(tmp_path, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(64)), raising=False)
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("150000 100000\n")  # one and a half cores
    assert available_cores(cpu_max) == 2
    cpu_max.write_text("max 100000\n")
    assert available_cores(cpu_max) == 64
    assert available_cores(tmp_path / "missing") == 64


class MeetingEncoder:
    """The real model; its first two encoder calls must run at the same time."""

    def __init__(self, model) -> None:
        self._model = model
        self.calls = 0
        self.lock = threading.Lock()
        self.meeting = threading.Barrier(2, timeout=60)

    def __getattr__(self, name: str):
        return getattr(self._model, name)

    def encode(self, features):
        with self.lock:
            self.calls += 1
            first_two = self.calls <= 2
        if first_two:
            self.meeting.wait()
        return self._model.encode(features)


@pytest.fixture(scope="module")
def demo_minute() -> tuple[Recording, list[Chunk]]:
    samples, rate = sf.read(DEMO, dtype="float32", frames=16_000 * 56)
    starts = (0.0, 14.0, 28.0, 42.0)
    chunks = [Chunk(k, a, a + 13.5, (SpeechSegment(a, a + 13.5),)) for k, a in enumerate(starts)]
    return Recording(samples, rate), chunks


def _words(results) -> list[tuple[int, str, float]]:
    return [(r.chunk.index, w.text, round(w.start, 2)) for r in results for s in r.segments for w in s.words]


def test_two_lanes_decode_side_by_side_and_give_the_words_of_one_lane(demo_minute):
    recording, chunks = demo_minute
    two = load_model(WhisperConfig(device="cpu", cpu_threads=2))
    one = load_model(WhisperConfig(device="cpu", cpu_threads=1))
    assert (replicas(two), replicas(one)) == (2, 1)
    options = DecodeOptions(language="en", beam_size=2, batch_size=1, hotwords=None)
    side_by_side = list(decode_fast(MeetingEncoder(two), recording, chunks, replace(options, lanes=2)))
    alone = list(decode_fast(one, recording, chunks, options))
    assert [r.chunk.index for r in side_by_side] == [0, 1, 2, 3]
    assert _words(side_by_side) == _words(alone) and len(_words(alone)) > 80


def test_a_cancel_with_two_lanes_stops_the_decode_and_leaves_no_lane_running(demo_minute):
    recording, chunks = demo_minute
    model = load_model(WhisperConfig(device="cpu", cpu_threads=2))
    cancel = threading.Event()
    options = DecodeOptions(language="en", beam_size=1, batch_size=1, hotwords=None, lanes=2)
    decoded = []
    with pytest.raises(Cancelled):
        for result in decode_fast(model, recording, chunks, options, cancel):
            decoded.append(result)
            cancel.set()  # the user presses cancel once the first line shows
    assert len(decoded) == 1
    assert not [t for t in threading.enumerate() if t.name.startswith("whisper-lane")]
