"""The global chunk queue: longest first, bounded retries that go out alone, even shares for workers."""

from __future__ import annotations

import pytest

from engine.distributed.queue import ChunkQueue, Job, plan_fill
from engine.types import Chunk


def jobs(*seconds: float, file: str = "a") -> list[Job]:
    return [Job(file, Chunk(i, 0.0, s)) for i, s in enumerate(seconds)]


def test_longest_chunks_go_out_first_and_fifo_keeps_the_order_they_came_in():
    longest, fifo = ChunkQueue("longest"), ChunkQueue("fifo")
    for queue in (longest, fifo):
        queue.put(jobs(100, 300, 50, file="a"))
        queue.put(jobs(280, file="b"))
    assert [j.seconds for j in longest.take(10)] == [300, 280, 100, 50]
    assert [j.seconds for j in fifo.take(10)] == [100, 300, 50, 280]


def test_a_failed_chunk_goes_out_alone_and_only_as_often_as_allowed():
    queue = ChunkQueue("longest", max_retries=1)
    first, *others = jobs(300, 200, 100)
    queue.put(others)
    assert queue.retry(first)
    assert queue.take(8) == [Job("a", first.chunk, attempts=1)]  # alone, though others wait
    assert not queue.retry(Job("a", first.chunk, attempts=1))  # a third try is not allowed
    assert [j.seconds for j in queue.take(8)] == [200, 100]


def test_dropping_a_file_removes_only_its_waiting_chunks():
    queue = ChunkQueue()
    queue.put(jobs(10, 20, file="a") + jobs(30, file="b"))
    assert len(queue.drop("a")) == 2
    assert [j.file for j in queue.take(8)] == ["b"]


def test_a_short_queue_is_shared_by_every_worker_before_any_gets_a_second_call():
    queue = ChunkQueue()
    queue.put(jobs(*range(10, 20)))
    plan = plan_fill(queue, [0, 0, 0, 0], batch=16, depth=2)
    assert [(w, len(js)) for w, js in plan] == [(0, 3), (1, 3), (2, 3), (3, 1)]


def test_a_long_queue_fills_every_worker_two_full_batches_deep():
    queue = ChunkQueue()
    queue.put(jobs(*[300.0] * 100))
    plan = plan_fill(queue, [1, 0], batch=16, depth=2)
    assert [(w, len(js)) for w, js in plan] == [(1, 16), (0, 16), (1, 16)]
    assert len(queue) == 100 - 48


def test_an_unknown_order_is_refused():
    with pytest.raises(ValueError, match="longest, fifo"):
        ChunkQueue("random")
