"""A request in flight: what to decode, where a retry starts from, and what it has cost so far.

A `Work` is created once per request and replaced (never mutated in place) when a loop sends the
request back to the queue: the replacement carries the output kept so far (`prefix`), the decoding
mode of the retry, and the accumulated cost, so the final `DecodeResult` reports all attempts.

The scheduler takes work through the small `WorkSource` protocol: `WorkQueue` (one finite stream of
requests, the local path) or a long-lived source that many jobs feed (`engine.serve.fair`). `pop`
may wait for work and returns None only when the source is exhausted; `poll` never waits, so a
running batch is never held up by an empty source; `cancelled(id)` lets the scheduler free the row
of a request whose job was cancelled at once.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from engine.decode.api import DecodeRequest, DecodeResult
from engine.decode.sampling import DecodeMode
from engine.types import FinishReason, GenerationStats


@dataclass(frozen=True, slots=True)
class Cost:
    prefill_seconds: float = 0.0
    decode_seconds: float = 0.0
    kept_sum: float = 0.0  # Σ kept/logical KV over decode steps
    steps: int = 0
    kept_last: float = 0.0  # kept/logical KV at the latest step
    peak: int = 0  # most KV entries held at once, all layers
    lost: int = 0  # speech tokens evicted before the transcript had written them (each attempt re-reads all)
    stopped: bool = False  # speech-anchor: the row's times ran ahead of its text, so it stopped evicting

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.prefill_seconds + other.prefill_seconds,
            self.decode_seconds + other.decode_seconds,
            self.kept_sum + other.kept_sum,
            self.steps + other.steps,
            other.kept_last if other.steps else self.kept_last,
            max(self.peak, other.peak),
            max(self.lost, other.lost),
            self.stopped or other.stopped,
        )


@dataclass(frozen=True, slots=True)
class Work:
    request: DecodeRequest
    mode: DecodeMode  # how this attempt chooses tokens
    prefix: tuple[int, ...] = ()  # output already accepted; decoding resumes after it
    retries: int = 0  # loop retries used so far
    revert_after: int | None = None  # back to the base mode once a segment ends past this index
    salvage: tuple[int, ...] = ()  # the best loop-free output seen, kept if every retry fails
    cost: Cost = Cost()
    rolled_back: int = 0  # output tokens earlier attempts threw away
    batch_span: int = 0  # batch-minimum cap: shortest speech span of the rows it joined (0: not yet)
    keeps_speech: bool = False  # it outgrew its anchored plan once: it resumes sized for all its speech

    def retry(
        self, prefix: tuple[int, ...], mode: DecodeMode, loop_start: int, cost: Cost, dropped: int = 0
    ) -> Work:
        """The next attempt: resume after `prefix` in `mode` until the output passes `loop_start`;
        `dropped` tokens of this attempt's output were thrown away."""
        return replace(
            self,
            prefix=prefix,
            mode=mode,
            retries=self.retries + 1,
            revert_after=loop_start,
            cost=self.cost + cost,
            rolled_back=self.rolled_back + dropped,
        )

    def resumed(self, tokens: tuple[int, ...], cost: Cost) -> Work:
        """This work, to continue after `tokens` (its output so far) when its batch is abandoned."""
        return replace(self, prefix=tokens, cost=self.cost + cost)

    def spent(self, cost: Cost) -> Work:
        return replace(self, cost=self.cost + cost)

    def result(
        self, tokens: tuple[int, ...], reason: FinishReason, cost: Cost, evicts: bool, cut: int = 0
    ) -> DecodeResult:
        """The finished request; `cut` tokens of the last attempt were dropped (loop salvage)."""
        total = self.cost + cost
        kept = total.kept_sum / total.steps if evicts and total.steps else None
        last = total.kept_last if evicts and total.steps else None
        stats = GenerationStats(
            prompt_tokens=self.request.prompt_length,
            generated_tokens=len(tokens),
            prefill_seconds=total.prefill_seconds,
            decode_seconds=total.decode_seconds,
            kv_kept_fraction=kept,
            kv_kept_last=last,
            kv_peak_entries=total.peak if total.steps else None,
            speech_lost_fraction=self._lost_fraction(total) if evicts else None,
            anchor_stopped=total.stopped,
            retries=self.retries,
            rolled_back_tokens=self.rolled_back,
            salvage_dropped_tokens=cut,
        )
        return DecodeResult(self.request.id, tokens, reason, stats)

    def ends_on_first(
        self, first: int, eos: Collection[int], cost: Cost, evicts: bool
    ) -> DecodeResult | None:
        """Its result when its first token `first` (chosen by the prefill) ends it: an EOS (not kept)
        or a budget that one more token fills; None when it goes on."""
        if first in eos:
            return self.result(self.prefix, FinishReason.EOS, cost, evicts)
        if len(self.prefix) + 1 >= self.request.max_new_tokens:
            return self.result((*self.prefix, first), FinishReason.LENGTH, cost, evicts)
        return None

    def _lost_fraction(self, cost: Cost) -> float:
        start, end = self.request.speech_span
        return cost.lost / (end - start) if end > start else 0.0


@runtime_checkable
class WorkSource(Protocol):
    """Where a scheduler's rows take their work from (see the module docstring)."""

    def pop(self) -> Work | None:
        """The next work, waiting for some if need be; None once no more will come."""
        ...

    def poll(self) -> Work | None:
        """The next work if there is some now; None otherwise (never waits)."""
        ...

    def waiting(self) -> bool:
        """Whether work is there to take now."""
        ...

    def push_front(self, works: Iterable[Work]) -> None:
        """Work handed back (retries, a batch abandoned): taken before anything else."""
        ...

    def cancelled(self, request_id: int) -> bool:
        """Whether the request's job was cancelled: its row is freed and no result is wanted."""
        ...


def join_batch(works: list[Work], decoding: Iterable[Work]) -> list[Work]:
    """`works` taking rows beside the rows `decoding`, each with the shortest speech span among them
    all: the batch-minimum cap's span (the authors' batching). A work that has one (a resumed row)
    keeps it; rows that leave never change it (evicted speech never comes back)."""
    shortest = min(end - start for start, end in (w.request.speech_span for w in (*works, *decoding)))
    return [w if w.batch_span else replace(w, batch_span=shortest) for w in works]


def take(source: WorkSource, count: int, wait: bool) -> list[Work]:
    """Up to `count` works from `source`; only the first may be waited for (`wait`: the batch is
    idle and empty), the rest are what is there now."""
    first = source.pop() if wait else source.poll()
    if first is None:
        return []
    return [first, *(w for w in (source.poll() for _ in range(count - 1)) if w)]


class WorkQueue:
    """Requests waiting for a row: retries and requeued work first, then new requests in order."""

    def __init__(self, requests: Iterable[DecodeRequest], mode: DecodeMode) -> None:
        self._new: Iterator[DecodeRequest] = iter(requests)
        self._front: deque[Work] = deque()
        self._mode = mode

    def pop(self) -> Work | None:
        if self._front:
            return self._front.popleft()
        request = next(self._new, None)
        return None if request is None else Work(request, self._mode)

    def poll(self) -> Work | None:
        """The same as `pop`: a finite stream of requests never has to wait for more."""
        return self.pop()

    def cancelled(self, request_id: int) -> bool:
        return False

    def waiting(self) -> bool:
        """Whether any work waits (reads at most one more request)."""
        if not self._front:
            request = next(self._new, None)
            if request is None:
                return False
            self._front.append(Work(request, self._mode))
        return True

    def push_front(self, works: Iterable[Work]) -> None:
        self._front.extendleft(reversed(list(works)))
