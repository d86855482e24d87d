"""The fair multi-job work source: the order rows take jobs' chunks, cancels, and waiting."""

from __future__ import annotations

import threading
import time

import pytest
import torch

from engine.decode.api import DecodeRequest, DecodeResult
from engine.decode.sampling import DecodeMode
from engine.serve.fair import FairSource
from engine.types import FinishReason


def requests(n: int):
    for i in range(n):
        yield DecodeRequest(i, torch.zeros(4, 2), (1, 3), 8)


def collect():
    got: list = []
    return got, got.append


def take(source: FairSource, n: int):
    return [source.poll() for _ in range(n)]


def finish(source: FairSource, work) -> None:
    source.route(DecodeResult(work.request.id, (1, 2), FinishReason.EOS))


def test_a_short_job_behind_a_long_one_gets_the_next_free_rows():
    source = FairSource(DecodeMode())
    long_results, long_deliver = collect()
    short_results, short_deliver = collect()
    source.add(1, requests(100), 100, long_deliver)
    first = take(source, 4)  # the long job alone: it takes every row
    source.add(2, requests(2), 2, short_deliver)
    finish(source, first[0])
    finish(source, first[1])
    freed = take(source, 2)  # two rows free up: both go to the short job (fewest rows in flight)
    for work in freed:
        finish(source, work)
    assert [r.id for r in short_results] == [0, 1]  # its own ids, in its own numbering
    assert [r.id for r in long_results] == [0, 1]
    assert len({w.request.id for w in first + freed}) == 6  # ids unique across jobs


def test_jobs_with_equal_shares_alternate():
    source = FairSource(DecodeMode())
    owners: dict[int, str] = {}
    for job, name in ((1, "a"), (2, "b"), (3, "c")):
        source.add(job, requests(10), 10, lambda r, name=name: owners.setdefault(len(owners), name))
    works = take(source, 6)
    for work in works:
        finish(source, work)
    assert sorted(owners.values()) == ["a", "a", "b", "b", "c", "c"]


def test_a_cancel_drops_queued_chunks_and_frees_rows_at_once():
    source = FairSource(DecodeMode())
    got, deliver = collect()
    source.add(1, requests(10), 10, deliver)
    rows = take(source, 3)
    source.push_front([rows[2]])  # e.g. a loop retry waiting in front
    source.cancel(1)
    assert [source.cancelled(w.request.id) for w in rows[:2]] == [True, True]
    assert source.rows_freed == 2
    assert source.chunks_dropped == 7 + 1  # never built, and the retry in front
    assert source.poll() is None and not source.waiting()
    finish(source, rows[0])  # a result racing the cancel is dropped, not delivered
    assert got == [] and source.jobs == 0


def test_pop_waits_for_a_job_and_returns_none_once_closed():
    source = FairSource(DecodeMode())
    taken: list = []
    waiter = threading.Thread(target=lambda: taken.append(source.pop()))
    waiter.start()
    time.sleep(0.1)
    assert waiter.is_alive()  # nothing queued: an idle loop waits
    source.add(1, requests(1), 1, lambda r: None)
    waiter.join(timeout=5)
    assert taken and taken[0].request.prompt_length == 4
    closer = threading.Thread(target=lambda: taken.append(source.pop()))
    closer.start()
    source.close()
    closer.join(timeout=5)
    assert taken[-1] is None


def test_a_job_whose_audio_fails_ends_alone():
    def broken():
        yield DecodeRequest(0, torch.zeros(4, 2), (1, 3), 8)
        raise ValueError("damaged audio")

    source = FairSource(DecodeMode())
    bad, bad_deliver = collect()
    good, good_deliver = collect()
    source.add(1, broken(), 3, bad_deliver)
    source.add(2, requests(3), 3, good_deliver)
    works = [w for w in take(source, 6) if w is not None]
    assert len(works) == 4  # one of the broken job's, three of the good one's
    assert isinstance(bad[-1], ValueError)
    for work in works:
        finish(source, work)
    assert len([r for r in good if isinstance(r, DecodeResult)]) == 3


def test_a_job_id_is_taken_once():
    source = FairSource(DecodeMode())
    source.add(1, requests(1), 1, lambda r: None)
    with pytest.raises(ValueError, match="already queued"):
        source.add(1, requests(1), 1, lambda r: None)


def held(source: FairSource) -> tuple[int, int]:
    """The records a long-running server keeps for jobs: (jobs, request owners). Each job's must go
    once it has ended, or every cancelled client leaks a little for the server's whole life."""
    return len(source._jobs), len(source._owner)


def test_of_two_jobs_with_as_many_rows_the_one_served_longest_ago_goes_first():
    source = FairSource(DecodeMode())
    order: list[str] = []
    source.add(1, requests(10), 10, lambda r: order.append("first"))
    finish(source, source.poll())  # the first job was served a moment ago and has no row now
    source.add(2, requests(10), 10, lambda r: order.append("second"))
    finish(source, source.poll())  # both have no row: the second has never been served
    finish(source, source.poll())
    assert order == ["first", "second", "first"]


def test_a_finished_job_leaves_nothing_behind():
    source = FairSource(DecodeMode())
    got, deliver = collect()
    source.add(1, requests(2), 2, deliver)
    for work in take(source, 2):
        finish(source, work)
    assert source.poll() is None and [r.id for r in got] == [0, 1]
    source.finish(1)
    assert held(source) == (0, 0) and source.jobs == 0
    assert (source.rows_freed, source.chunks_dropped) == (0, 0)  # nothing was cancelled


def test_a_cancelled_jobs_record_goes_once_its_last_row_is_back_whichever_way():
    source = FairSource(DecodeMode())
    source.add(1, requests(10), 10, lambda r: None)
    rows = take(source, 4)
    source.push_front([rows[3]])  # a retry waiting in front
    source.cancel(1)  # the retry is dropped at once; three rows still decode
    source.finish(1)  # as the job's thread does after a cancel: nothing is counted twice
    assert held(source) == (1, 3) and source.jobs == 0 and source.chunks_dropped == 6 + 1
    assert source.cancelled(rows[0].request.id) and not source.cancelled(rows[0].request.id)
    finish(source, rows[1])  # a result that raced the cancel
    assert held(source) == (1, 1)
    assert source.cancelled(rows[2].request.id)
    assert held(source) == (0, 0)
    assert (source.rows_freed, source.chunks_dropped) == (2, 6 + 1)


def test_a_job_cancelled_while_its_chunk_is_built_gives_no_work_and_leaves_nothing():
    source = FairSource(DecodeMode())

    def cancelled_midway():
        source.cancel(1)  # the client leaves while its first chunk's audio is encoded
        yield from requests(3)

    source.add(1, cancelled_midway(), 3, lambda r: None)
    source.add(2, requests(1), 1, lambda r: None)
    work = source.poll()
    assert work is not None and work.request.prompt_length == 4  # the other job's chunk instead
    assert source.chunks_dropped == 3 and held(source) == (1, 1)
    finish(source, work)
    source.finish(2)
    assert held(source) == (0, 0)


def test_a_job_whose_audio_fails_leaves_nothing_once_its_rows_are_back():
    def broken():
        yield DecodeRequest(0, torch.zeros(4, 2), (1, 3), 8)
        raise ValueError("damaged audio")

    source = FairSource(DecodeMode())
    got, deliver = collect()
    source.add(1, broken(), 3, deliver)
    first = source.poll()
    assert source.poll() is None and isinstance(got[-1], ValueError)
    assert not source.waiting() and source.jobs == 0
    finish(source, first)  # the row decoding when the audio failed: its result is not delivered
    assert got[:-1] == [] and held(source) == (0, 0)


def test_requests_are_handed_out_as_they_are_without_a_decode_mode():
    source = FairSource()
    source.add(1, requests(1), 1, lambda r: None)
    request = source.poll()
    assert isinstance(request, DecodeRequest) and request.prompt_length == 4


def test_a_failed_decode_loop_ends_every_live_job_with_its_error_and_forgets_them():
    source = FairSource(DecodeMode())
    live, live_deliver = collect()
    gone, gone_deliver = collect()
    source.add(1, requests(5), 5, live_deliver)
    source.add(2, requests(5), 5, gone_deliver)
    rows = take(source, 3)
    source.push_front([rows[0]])
    source.cancel(2)
    failure = RuntimeError("out of memory")
    source.fail_all(failure)
    assert live == [failure] and gone == []  # a cancelled client is told nothing more
    assert held(source) == (0, 0) and source.poll() is None and not source.waiting()


def test_cancelled_jobs_add_up_their_dropped_chunks():
    source = FairSource(DecodeMode())
    for job in (1, 2):
        source.add(job, requests(5), 5, lambda r: None)
        source.cancel(job)
    assert source.chunks_dropped == 10 and held(source) == (0, 0)


def test_an_idle_decode_loop_sleeps_instead_of_spinning():
    source = FairSource(DecodeMode())
    clock: list[int] = []
    taken: list = []

    def loop() -> None:
        clock.append(time.pthread_getcpuclockid(threading.get_ident()))
        taken.append(source.pop())

    waiter = threading.Thread(target=loop)
    waiter.start()
    time.sleep(1.0)
    spent = time.clock_gettime(clock[0])  # CPU seconds the waiting loop used
    source.close()
    waiter.join(timeout=5)
    assert taken == [None] and spent < 0.05


def test_a_job_whose_first_chunk_fails_ends_at_once_and_leaves_nothing():
    def broken():
        raise ValueError("not audio")
        yield  # a generator, like a job's requests

    source = FairSource(DecodeMode())
    got, deliver = collect()
    source.add(1, broken(), 2, deliver)
    assert source.poll() is None and [str(e) for e in got] == ["not audio"]
    assert held(source) == (0, 0) and not source.waiting()


def test_rows_of_a_job_cancelled_while_its_next_chunk_is_built_are_still_freed():
    source = FairSource(DecodeMode())

    def leaves_after_one():
        yield from requests(1)
        source.cancel(1)  # the client leaves while the second chunk's audio is encoded
        yield from requests(2)

    source.add(1, leaves_after_one(), 3, lambda r: None)
    first = source.poll()
    assert source.poll() is None  # the second chunk is dropped, not handed out
    assert source.cancelled(first.request.id) and source.rows_freed == 1
    assert held(source) == (0, 0)


def test_rows_of_a_job_whose_chunks_ran_out_are_freed_when_it_is_cancelled():
    source = FairSource(DecodeMode())
    source.add(1, requests(2), 2, lambda r: None)
    rows = take(source, 3)  # two rows, then nothing more to build
    assert rows[2] is None and source.waiting() is False
    source.cancel(1)
    assert [source.cancelled(w.request.id) for w in rows[:2]] == [True, True]
    assert source.rows_freed == 2 and held(source) == (0, 0)


def test_a_retry_of_a_cancelled_job_handed_back_is_dropped_and_the_job_forgotten():
    source = FairSource(DecodeMode())
    source.add(1, requests(3), 3, lambda r: None)
    row = source.poll()
    source.cancel(1)
    source.push_front([row])  # the loop hands the row back (e.g. out of memory) after the cancel
    assert source.poll() is None and source.chunks_dropped == 2 + 1 and held(source) == (0, 0)


def test_work_carries_the_decoders_mode_and_waiting_says_whether_any_is_left():
    mode = DecodeMode(temperature=0.4)
    source = FairSource(mode)
    assert source.waiting() is False
    source.add(1, requests(2), 2, lambda r: None)
    assert source.waiting() is True  # queued, not yet built
    rows = take(source, 2)
    assert [w.mode for w in rows] == [mode, mode]
    assert source.poll() is None and source.waiting() is False  # both in rows, nothing more
    source.push_front([rows[1]])
    assert source.waiting() is True  # a retry in front
