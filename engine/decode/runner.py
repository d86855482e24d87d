"""The device side of a batch: the KV store, the attention backend, the sampler, each row's last token.

`reserve` sizes the store once, from the rows about to be admitted: each row's slots are what its
policy keeps at most (`RowLayout.capacity`), and the store takes as many rows as its KV memory budget
(`kv_memory_limit`, or the device's free memory) holds at that size, up to the batch
(`admission.rows_within`) and to the rows taken (at least `MIN_ROWS`: a batch whose queue had
little work grows when more waits). Between steps `make_room` grows every row's slots in place when a row
keeps more than planned (an anchored row whose transcript lags) and the budget allows it; otherwise,
and for a later request that does not fit, it raises `StoreTooSmall` and the decoder resumes the
rows in a store sized for them. `admit` prefills one request with the HF forward, imports the KV
entries its first decode step may see into a row of the store (per layer group, as its `RowSlots`
says), and chooses its first token, which stays on the device: the row feeds it at its first step, and
the step's read-back brings it to the host with the tokens the step chose (one read per step, never
one per admission). `launch` turns a host `StepPlan` into tensors, moves entries
into the holes the step's evictions left (and brings speech back, for `speech-follow`), queues
`decode_step` (or its captured replay) for rows 0..n-1 and the token choice, and starts a
non-blocking copy of the chosen tokens (and, while an admitted row's first token is unread, of the
fed ones) into pinned host memory; `PendingTokens.read` waits for that copy. Every host → device
input goes through two pinned staging buffers (`Staging`), never a blocking `.to(device)`; the only
waits are for a step's tokens (`PendingTokens.read`) and the device sync before growing the store in
place. Captured steps of every
row bucket are taken largest-first when the store is sized (attention that reads lengths).
Everything runs under `torch.inference_mode`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from engine.decode.admission import MIN_ROWS, device_budget, rows_within
from engine.decode.attention import make_attention
from engine.decode.capture import CudaCapture, EmulatedCapture
from engine.decode.config import EngineConfig
from engine.decode.fused import FusedModel
from engine.decode.graphs import StepGraphs
from engine.decode.kv_store import KVStore, StoreTooSmall, round_up
from engine.decode.layout import RowLayout
from engine.decode.prefill import prefill
from engine.decode.rows import StepPlan
from engine.decode.sampling import DecodeMode, Sampler, row_key
from engine.decode.staging import Staging
from engine.decode.step import ModelParts, StepInputs, decode_step
from engine.decode.work import Work


@dataclass(frozen=True, slots=True, eq=False)
class PendingTokens:
    """Tokens chosen by a queued step, on their way to pinned host memory."""

    host: torch.Tensor  # (2, n) int64, pinned on CUDA: the chosen tokens, then the fed ones
    done: torch.cuda.Event | None  # None: already there (CPU)
    fed: bool  # whether the fed tokens were copied too (some row's first token was unread)

    def read(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The chosen tokens (n,) and, when copied, the fed ones (n,): one wait for both."""
        if self.done is not None:
            self.done.synchronize()
        host = self.host.numpy()
        return host[0], host[1] if self.fed else None


@dataclass(frozen=True, slots=True, eq=False)
class Launched:
    """A step queued on the device: its plan, its tokens on their way, its entry in the host times."""

    plan: StepPlan
    tokens: PendingTokens
    index: int  # the step's entry in `Scheduler.host_times`


class Runner:
    def __init__(
        self,
        parts: ModelParts,
        model: FusedModel,
        config: EngineConfig,
        rows: int,
        layer_group: tuple[int, ...],
    ) -> None:
        shape = parts.attention_shape
        self.parts, self.model, self.config, self.device = parts, model, config, parts.device
        self.store = KVStore(
            len(parts.layers),
            shape.kv_heads,
            shape.head_dim,
            rows,
            parts.dtype,
            self.device,
            config.kv_memory_limit,
        )
        self.attention = make_attention(config.attention, shape, self.device)
        self.sampler = Sampler(rows, parts.vocab_size, self.device, config.uses_penalties)
        self.last = torch.zeros(rows, dtype=torch.int64, device=self.device)  # (B,) token fed next
        self.layer_group = layer_group
        self.group_layers = [  # layer indices of each group
            torch.tensor([i for i, g in enumerate(layer_group) if g == group], device=self.device)
            for group in range(max(layer_group) + 1)
        ]
        cuda = self.device.type == "cuda"
        self._host = [torch.zeros(2 * rows, dtype=torch.int64, pin_memory=cuda) for _ in range(2)]  # (2B,) ×2
        self._launched = 0
        self.staging = Staging(self.device)
        self.prep_seconds = 0.0  # CPU seconds turning plans into device inputs
        self.growths = 0  # times `make_room` grew the store
        self.graphs: StepGraphs | None = None
        capture = None
        if config.emulate_graphs:
            capture = EmulatedCapture()
        elif config.cuda_graphs and cuda and self.attention.name != "flashinfer":
            capture = CudaCapture()
        if capture is not None:
            moves = config.eviction.policy != "none"
            self.graphs = StepGraphs(
                parts,
                model,
                self.store,
                self.attention,
                self.last,
                layer_group,
                self.group_layers,
                capture,
                moves,
            )

    @property
    def rows(self) -> int:
        """Rows the store holds (before it is sized: the batch)."""
        return self.store.rows

    def reserve(self, layouts: Sequence[RowLayout], held: int = 0) -> None:
        """Size the store for `layouts` (rows already holding up to `held` entries) on first use,
        with as many rows as the budget holds; afterwards only check that they fit."""
        need = max(max(layout.capacity for layout in layouts), held + 1) + 1  # + the scratch slot
        speech = max(layout.speech_len if layout.follows else 0 for layout in layouts)
        if self.store.capacity:
            if speech > self.store.speech_capacity:
                raise StoreTooSmall(need, speech)
            self.make_room(need - 1)  # a longer request: grow in place if the budget allows
            return
        need = round_up(max(need, self.config.kv_slots or 0), 64)
        rows = rows_within(self._free_bytes(), self.store.nbytes(need, round_up(speech, 64), rows=1))
        if rows < 1:
            raise torch.OutOfMemoryError(f"not even one row of {need} KV slots fits in the memory budget")
        self.store.allocate(need, speech, min(rows, self.store.max_rows, max(len(layouts), MIN_ROWS)))
        if self.graphs is not None:
            self.graphs.capture_buckets()

    def make_room(self, entries: int) -> None:
        """Before a step: every row may hold `entries` entries after it (plus the scratch slot).
        Grows the rows' slots in place by at least an eighth when the budget allows; otherwise raises
        `StoreTooSmall`."""
        need = entries + 1
        if need <= self.store.capacity:
            return
        grown = round_up(max(need, self.store.capacity + self.store.capacity // 8), 64)
        if self.store.nbytes(grown, self.store.speech_capacity) > self._room_to_copy():
            raise StoreTooSmall(need, self.store.speech_capacity)
        _sync(self.device)  # no queued step may still read the old buffers
        self.store.ensure(grown, self.store.speech_capacity)
        self.growths += 1

    @torch.inference_mode()
    def admit(self, row: int, work: Work, layout: RowLayout, held: list[np.ndarray]) -> float:
        """Prefill `work` into `row`, keeping the positions `held` per layer group (`RowSlots.held`),
        and choose its first new token, left on the device (in `last`, the token the row feeds next):
        nothing is read back here. Returns the seconds it took (to queue, on an asynchronous device)."""
        started = time.perf_counter()
        request, k = work.request, len(work.prefix)
        pre = prefill(self.parts, request.inputs_embeds, work.prefix)
        *positions, steps = self.staging.put([*held, np.array([k])])  # no blocking host → device copy
        self.store.import_row(row, layout, pre.keys, pre.values, positions, self.group_layers)
        self.set_mode(row, work, work.mode, work.prefix)
        first = self.sampler.choose(pre.logits[None], row, steps)
        self.sampler.note_row(row, first)
        self.last[row] = first[0]
        return time.perf_counter() - started

    @torch.inference_mode()
    def set_mode(self, row: int, work: Work, mode: DecodeMode, tokens: Sequence[int]) -> None:
        """Switch a row's decoding mode; `tokens` is its output so far (the penalty's history)."""
        self.sampler.set_mode(row, mode, row_key(mode.seed, work.request.id, work.retries))
        self.sampler.reset_row(row, list(tokens))

    @torch.inference_mode()
    def launch(self, plan: StepPlan) -> PendingTokens:
        """Queue one step for rows 0..n-1; the tokens they chose (n,) arrive in the result."""
        started = time.thread_time()
        n, groups = plan.positions.shape[0], plan.slots.shape[0]
        host = [np.concatenate([plan.positions[None], plan.slots, plan.seqlen, plan.chosen[None]])]
        padded, fits = self.graphs.padded(n, plan.moves, plan.speech) if self.graphs else ([], False)
        eager = [] if fits else [t for ts in (plan.moves, plan.speech) for t in ts if t is not None]
        staged = self.staging.put(host + padded + [np.stack(t) for t in eager])  # (2G + 2, n), ...
        moved, captured, transfers = staged[0], staged[1 : 1 + len(padded)], staged[1 + len(padded) :]
        positions, slots, seqlen, chosen = moved[0], moved[1 : 1 + groups], moved[1 + groups : -1], moved[-1]
        length = int(plan.seqlen.max())
        if transfers:
            self._transfer(plan, iter(transfers))
        self.prep_seconds += time.thread_time() - started
        if self.graphs is not None:
            logits = self.graphs.run(positions, slots, seqlen, length, captured)
        else:
            inputs = StepInputs(
                tokens=self.last[:n],
                positions=positions,
                write=tuple(self.store.flat_index(s) for s in slots),
                seqlen=seqlen,
                length=length,
                ragged=tuple(bool(row.min() != length) for row in plan.seqlen),
                layer_group=self.layer_group,
            )
            logits = decode_step(self.parts, self.model, self.store, self.attention, inputs)  # (n, V)
        tokens = self.sampler.choose(logits, 0, chosen)
        self.sampler.note(tokens)
        out = self._host[self._launched % 2][: 2 * n].view(2, n)
        self._launched += 1
        if plan.reads_first:  # an admitted row fed its first token: it comes back with the step's
            out.copy_(torch.stack((tokens, self.last[:n])), non_blocking=True)
        else:
            out[0].copy_(tokens, non_blocking=True)
        self.last[:n] = tokens
        if self.device.type != "cuda":
            return PendingTokens(out, None, plan.reads_first)
        done = torch.cuda.Event()
        done.record()
        return PendingTokens(out, done, plan.reads_first)

    def _transfer(self, plan: StepPlan, staged: Iterator[torch.Tensor]) -> None:
        """Fill the holes the step's evictions left, then bring speech back, group by group
        (`staged`: the non-empty transfer lists on the device, (3, m) each, in that order)."""
        for group, transfer in enumerate(plan.moves):
            if transfer is not None:
                self.store.move(self.group_layers[group], *next(staged))
        for group, transfer in enumerate(plan.speech):
            if transfer is not None:
                self.store.copy_speech(self.group_layers[group], *next(staged))

    @torch.inference_mode()
    def move_row(self, src: int, dst: int) -> None:
        self.store.move_row(src, dst)
        self.sampler.move_row(src, dst)
        self.last[dst] = self.last[src]

    def fits(self, rows: int, capacity: int, speech_capacity: int) -> bool:
        """Whether a store of `rows` rows with this need would fit in place of this one."""
        roomy = round_up(capacity + 1, 64), round_up(speech_capacity, 64)
        held = self.store.nbytes(self.store.capacity, self.store.speech_capacity)
        free = self._free_bytes() if self.config.kv_memory_limit is not None else self._free_bytes() + held
        return self.store.nbytes(*roomy, rows=rows) <= free

    def _room_to_copy(self) -> int:
        """Bytes a grown store may take while the old one still exists (the copy holds both): the
        KV budget, and on CUDA no more than the device has free beside the old store."""
        room = self.config.kv_memory_limit if self.config.kv_memory_limit is not None else 1 << 62
        if self.device.type == "cuda":
            room = min(room, device_budget(int(torch.cuda.mem_get_info(self.device)[0])))
        return room

    def _free_bytes(self) -> int:
        if self.config.kv_memory_limit is not None:
            return self.config.kv_memory_limit
        if self.device.type == "cuda":
            return device_budget(int(torch.cuda.mem_get_info(self.device)[0]))
        return 1 << 62


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
