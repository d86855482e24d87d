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
