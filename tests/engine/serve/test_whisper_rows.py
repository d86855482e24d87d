"""How the server's shared whisper calls are filled and laid out (`whisper_batch`), without a
model: which queued clips a call takes, how clips of different recordings share one array, and how
their times come back."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
from faster_whisper.transcribe import Segment, Word

from engine.backends.whisper_decode import DecodeOptions
from engine.serve.whisper_batch import RATE, Clip, WhisperBatcher, clips_of, fits, layout, shifted

OPTIONS = DecodeOptions(language="en", beam_size=5, batch_size=2, hotwords=None)
REPAIR = replace(OPTIONS, timestamp_tokens=True)


def clip(job: int, first: int, seconds: float, options: DecodeOptions = OPTIONS) -> Clip:
    samples = np.random.default_rng(first).standard_normal(int(seconds * RATE)).astype(np.float32)
    return Clip(0, job, samples, first, options)


def test_layout_cuts_each_clip_back_exactly_and_shifts_it_by_whole_seconds():
    rows = [clip(0, 5 * RATE + 123, 2.5), clip(1, 17, 0.3), clip(2, 90 * RATE + 15999, 29.9)]
    samples, clips, shifts = layout(rows)
    assert samples.dtype == np.float32  # whisper's own samples, not twice the memory
    for row, (a, b), shift in zip(rows, clips, shifts, strict=True):
        start, end = int(a * RATE), int(b * RATE)  # faster-whisper's own cut
        assert np.array_equal(samples[start:end], row.samples)
        assert row.first - start == shift * RATE
    starts = [int(a * RATE) for a, _ in clips]
    assert all(s2 >= s1 + len(r.samples) for s1, s2, r in zip(starts, starts[1:], rows, strict=False))


def test_a_call_takes_rows_of_the_same_options_within_each_jobs_share():
    opened = clip(0, 0, 1.0)
    share = Counter({0: 1})
    assert fits(clip(1, 0, 1.0), opened, share)
    assert not fits(clip(0, 0, 1.0), opened, Counter({0: 2}))  # job 0 has its two rows
    assert fits(clip(0, 0, 1.0), opened, Counter({0: 1}))
    repair = replace(OPTIONS, timestamp_tokens=True)
    assert not fits(clip(1, 0, 1.0, repair), opened, share)  # repairs batch with repairs
    assert fits(clip(1, 0, 1.0, replace(OPTIONS, batch_size=4, ramp=True)), opened, share)
    detecting = clip(0, 0, 1.0, replace(OPTIONS, language=None))
    assert not fits(clip(1, 0, 1.0, detecting.options), detecting, share)  # detection reads the whole call
    assert fits(clip(0, 0, 1.0, detecting.options), detecting, share)


def by_hand(batch_size: int) -> WhisperBatcher:
    """A batcher never started, whose calls a test takes itself: its source is closed, so a call
    taken when nothing is queued comes back empty instead of waiting for ever."""
    batcher = WhisperBatcher(None, batch_size)
    batcher.source.close()
    return batcher


def queued(batcher: WhisperBatcher, job: int, count: int, options: DecodeOptions = OPTIONS):
    samples = np.zeros(count * RATE, np.float32)
    return batcher.submit(clips_of(samples, [(k, k + 1.0) for k in range(count)], job, options))


def test_a_call_takes_each_jobs_share_then_other_jobs_and_leaves_the_rest_queued():
    batcher = by_hand(5)
    for job in range(3):
        queued(batcher, job, 3)
    first = batcher._take()
    assert Counter(r.job for r in first) == {0: 2, 1: 2, 2: 1}  # two each at most, five in all
    second = batcher._take()
    assert Counter(r.job for r in second) == {0: 1, 1: 1, 2: 2}  # what was left
    assert batcher.source.waiting() is False


def test_repairs_wait_for_a_call_of_their_own():
    batcher = by_hand(8)
    queued(batcher, 0, 2)
    queued(batcher, 1, 2, REPAIR)
    queued(batcher, 2, 1, REPAIR)
    calls = [batcher._take(), batcher._take()]
    assert [sorted(r.job for r in call) for call in calls] == [[0, 0], [1, 1, 2]]
    assert all(r.options.timestamp_tokens for r in calls[1])


def test_closing_a_ticket_drops_its_queued_clips():
    batcher = by_hand(8)
    ticket = queued(batcher, 0, 3)
    other = queued(batcher, 1, 1)
    ticket.close()
    assert batcher.source.chunks_dropped == 3
    assert [r.job for r in batcher._take()] == [1]
    other.close()
    assert batcher.source.jobs == 0


def test_clips_are_cut_as_faster_whisper_cuts_them():
    samples = np.arange(3 * RATE, dtype=np.float32)
    rows = clips_of(samples, [(0.5, 1.25), (2.0, 3.0)], job=7, options=OPTIONS)
    expected = [(0, 7, 8000, 12000), (1, 7, 32000, 16000)]
    assert [(r.id, r.job, r.first, len(r.samples)) for r in rows] == expected
    assert rows[1].samples[0] == 32000


def test_a_segment_comes_back_by_whole_seconds_rounded_and_never_before_zero():
    words = [Word(0.3, 0.716, " so", 0.9), Word(1.004, 1.5, " yes", 0.8)]
    segment = Segment(1, 100, 0.3004, 1.5004, " so yes", [1, 2], -0.1, 1.0, 0.0, words, 0.0)
    moved = shifted(segment, 12)
    assert (moved.start, moved.end, moved.seek) == (12.3, 13.5, 1300)  # to the millisecond
    assert [(w.start, w.end) for w in moved.words] == [(12.3, 12.72), (13.0, 13.5)]  # to 10 ms
    early = shifted(segment, -1)
    assert (early.start, early.words[0].start, early.words[1].start) == (0.0, 0.0, 0.0)
    assert shifted(segment, 0) is segment
    bare = shifted(replace(segment, words=None), 12)  # decoded without word times
    assert (bare.start, bare.words) == (12.3, None)


def test_metrics_report_calls_rows_and_what_cancels_dropped_each_with_its_help_line():
    batcher = WhisperBatcher(None, batch_size=8)
    queued(batcher, 0, 2).close()
    queued(batcher, 1, 1)
    batcher.calls, batcher.rows, batcher.mixed, batcher.failures = 4, 10, 1, 2
    assert batcher.metrics() == [  # (name, type, the # HELP line an operator reads, value)
        ("murmur_whisper_calls_total", "counter", "batched whisper decode calls", 4),
        ("murmur_whisper_rows_total", "counter", "clips decoded, summed over calls", 10),
        ("murmur_whisper_rows_per_call", "gauge", "mean rows per decode call", 2.5),
        ("murmur_whisper_mixed_calls_total", "counter", "calls carrying rows of more than one job", 1),
        ("murmur_queue_jobs", "gauge", "submissions with clips queued or in a call", 1),
        ("murmur_chunks_dropped_cancelled_total", "counter", "queued clips dropped by a cancel", 2),
        ("murmur_decode_restarts_total", "counter", "decode calls that failed", 2),
    ]
    assert WhisperBatcher(None, batch_size=8).metrics()[2][3] == 0.0  # no call yet: no division by zero


def test_a_lone_job_takes_no_more_than_its_own_batch_size_per_call():
    batcher = by_hand(8)
    queued(batcher, 0, 5)
    assert [len(batcher._take()) for _ in range(3)] == [2, 2, 1]  # as a local run's calls on a CPU
    assert batcher._take() is None  # nothing left and the source closed: a lane ends
