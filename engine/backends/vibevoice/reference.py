"""The reference decoder: transformers' `generate` over batches of decode requests.

`GenerateDecoder` implements `engine.decode.api.Decoder`. It takes requests in the order given,
`batch_size` at a time, left-pads their prompt embeddings (zeros, masked out) and runs greedy
`generate(inputs_embeds=...)` on the checkpoint's own language model and head, seen as a
transformers causal LM (`causal_lm_view`: the same modules, no copy). `generate` derives position
ids from the attention mask, so padding does not shift a row's positions and a padded row
decodes like the same request alone; prefill computes logits for the last position only
(`logits_to_keep=1`). Per row it stops at an
end-of-reply token (EOS), at its own `max_new_tokens` (LENGTH), or in a repetition loop (LOOP:
the row is cut back to before the repetition plus one copy of it, `engine.decode.loop_guard`). A whole
recording in one request is the single-pass baseline; many chunks in batches, the chunked one.

Built like every decoder in `engine.backends.vibevoice.decoders`: `GenerateDecoder(model,
GenerateConfig(max_batch=...), eos_token_ids=..., segment_boundary=...)`. This reference path has
no loop recovery, so it never rolls rows back with `segment_boundary`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import torch
from transformers import (
    GenerationConfig,
    LogitsProcessor,
    LogitsProcessorList,
    StoppingCriteria,
    StoppingCriteriaList,
)

from engine.backends.base import check_cancel
from engine.decode.api import DecodeRequest, DecodeResult, SegmentBoundary
from engine.decode.loop_guard import LoopGuardConfig, find_loop, salvage
from engine.types import FinishReason, GenerationStats

LOOP_CHECK_EVERY = 8  # decode steps between loop checks


@dataclass(frozen=True, slots=True)
class GenerateConfig:
    max_batch: int = 16  # requests decoded together (one `generate` call)
    pad_token_id: int | None = None  # fills finished rows; None: the checkpoint's, else an end id
    loops: LoopGuardConfig = field(default_factory=LoopGuardConfig)  # detection thresholds only

    def __post_init__(self) -> None:
        if self.max_batch < 1:
            raise ValueError(f"batch size must be at least 1, got {self.max_batch}")


class GenerateDecoder:
    """Greedy batched decoding through transformers `generate` (see the module docstring)."""

    name = "hf"

    def __init__(
        self,
        model: Any,
        config: GenerateConfig | None = None,
        eos_token_ids: Sequence[int] = (),
        segment_boundary: SegmentBoundary | None = None,
    ) -> None:
        if not eos_token_ids:
            raise ValueError("a decoder needs at least one end-of-reply token id")
        self.model = model
        self.lm = causal_lm_view(model)
        self.config = config or GenerateConfig()
        self.eos_token_ids = tuple(int(i) for i in eos_token_ids)
        pads = (self.config.pad_token_id, getattr(model.generation_config, "pad_token_id", None))
        self.pad_token_id = next((int(p) for p in pads if p is not None), self.eos_token_ids[0])
        self.segment_boundary = segment_boundary

    def decode(
        self, requests: Iterable[DecodeRequest], cancel: threading.Event | None = None
    ) -> Iterator[DecodeResult]:
        pending = iter(requests)
        while batch := list(islice(pending, self.config.max_batch)):
            check_cancel(cancel)
            yield from self._decode_batch(batch, cancel)

    @torch.inference_mode()
    def _decode_batch(
        self, batch: list[DecodeRequest], cancel: threading.Event | None
    ) -> list[DecodeResult]:
        embeds, mask = left_pad([r.inputs_embeds for r in batch])  # (B, L, d), (B, L)
        budgets = [r.max_new_tokens for r in batch]
        watch = _RowWatch(budgets, self.eos_token_ids, self.config.loops, cancel)
        timer = _FirstStep()
        started = time.perf_counter()
        out = self.lm.generate(
            inputs_embeds=embeds,
            attention_mask=mask,
            generation_config=self._generation_config(max(budgets)),
            stopping_criteria=StoppingCriteriaList([watch]),
            logits_processor=LogitsProcessorList([timer]),
        )  # (B, T) generated ids only
        finished = time.perf_counter()
        check_cancel(cancel)
        first = timer.at or finished
        prefill, decode = (first - started) / len(batch), (finished - first) / len(batch)  # per row
        rows = out.tolist()
        return [
            self._result(r, rows[b], watch.loops_found.get(b), prefill, decode) for b, r in enumerate(batch)
        ]

    def _generation_config(self, max_new_tokens: int) -> GenerationConfig:
        return GenerationConfig(
            max_new_tokens=max_new_tokens,
            do_sample=False,
            num_beams=1,
            eos_token_id=list(self.eos_token_ids),
            pad_token_id=self.pad_token_id,
            use_cache=True,
        )

    def _result(
        self,
        request: DecodeRequest,
        row: list[int],
        loop: tuple[int, int] | None,  # (tokens kept, step it was found at)
        prefill: float,
        decode: float,
    ) -> DecodeResult:
        row = row[: request.max_new_tokens if loop is None else loop[1]]  # what follows is padding
        eos = next((i for i, t in enumerate(row) if t in self.eos_token_ids), None)
        if eos is not None:
            tokens, reason, steps = row[:eos], FinishReason.EOS, eos + 1
        elif loop is not None:
            tokens, reason, steps = row[: loop[0]], FinishReason.LOOP, loop[1]
        else:
            tokens, reason, steps = row, FinishReason.LENGTH, len(row)
        stats = GenerationStats(
            prompt_tokens=request.prompt_length,
            generated_tokens=steps,
            prefill_seconds=prefill,
            decode_seconds=decode,
        )
        return DecodeResult(id=request.id, token_ids=tuple(tokens), finish_reason=reason, stats=stats)


def causal_lm_view(model: Any) -> Any:
    """The VibeVoice model's language model and head as a transformers causal LM (shared modules).

    The VibeVoice class cannot `generate` from embeddings; its text model's own causal-LM class
    can. The shell is built on the meta device (no memory), then given the real modules.
    """
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        lm = AutoModelForCausalLM.from_config(model.config.text_config)
    lm.model = model.model.language_model
    lm.lm_head = model.lm_head
    return lm.eval()


def left_pad(rows: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack (P_i, d) rows into (B, L, d), zeros on the left, and the (B, L) attention mask."""
    length = max(r.shape[0] for r in rows)
    first = rows[0]
    embeds = first.new_zeros((len(rows), length, first.shape[1]))
    mask = torch.zeros((len(rows), length), dtype=torch.long, device=first.device)
    for b, r in enumerate(rows):
        embeds[b, length - r.shape[0] :] = r
        mask[b, length - r.shape[0] :] = 1
    return embeds, mask


class _RowWatch(StoppingCriteria):
    """Stops each row at its own budget or in a loop (recording where), and all rows on cancel."""

    def __init__(
        self,
        budgets: list[int],
        eos_token_ids: tuple[int, ...],
        loops: LoopGuardConfig,
        cancel: threading.Event | None,
    ) -> None:
        self.budgets = budgets
        self.eos = torch.tensor(eos_token_ids)
        self.loops = loops
        self.cancel = cancel
        self.loops_found: dict[int, tuple[int, int]] = {}  # row → (tokens to keep, step found)

    def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.Tensor:
        steps = input_ids.shape[1]  # (B, steps): generated ids so far
        done = torch.tensor([steps >= b for b in self.budgets], device=input_ids.device)
        if self.cancel is not None and self.cancel.is_set():
            return torch.ones_like(done)
        if self.loops.enabled and steps % LOOP_CHECK_EVERY == 0:
            self._find_loops(input_ids, done)
        for b in self.loops_found:
            done[b] = True
        return done

    def _find_loops(self, input_ids: torch.Tensor, done: torch.Tensor) -> None:
        ended = torch.isin(input_ids, self.eos.to(input_ids.device)).any(-1) | done  # (B,)
        tails = input_ids[:, -self.loops.window() :].tolist()
        steps = input_ids.shape[1]
        for b, tail in enumerate(tails):
            if b in self.loops_found or bool(ended[b]) or find_loop(tail, self.loops) is None:
                continue
            row = input_ids[b].tolist()
            loop = find_loop(row, self.loops)  # the whole row: where the loop began
            self.loops_found[b] = (steps if loop is None else len(salvage(row, loop)), steps)


class _FirstStep(LogitsProcessor):
    """Notes when the first logits arrive: the end of prefill."""

    def __init__(self) -> None:
        self.at: float | None = None

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if self.at is None:
            self.at = time.perf_counter()
        return scores
