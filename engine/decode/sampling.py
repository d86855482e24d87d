"""Choosing each row's next token: greedy, with an optional repetition penalty, or seeded sampling.

Every row has its own `DecodeMode`. The repetition penalty follows HF's processor (divide positive
logits of already generated tokens by the penalty, multiply negative ones); with prompt embeddings
only the generated tokens count. Sampling (temperature > 0) uses Gumbel noise from a counter-based
hash of (row key, token index, vocabulary id), so a row draws the same tokens whatever batch it
runs in. Per-row state lives in preallocated tensors: penalty, temperature, key (B,), seen (B, V).
"""

from __future__ import annotations

import numpy as np
import torch

from engine.decode.config import DecodeMode

__all__ = ["DecodeMode", "Sampler", "counter_uniform", "row_key"]  # DecodeMode: engine.decode.config

_M32 = 0xFFFFFFFF


def _mix32(x: torch.Tensor) -> torch.Tensor:
    """A 32-bit integer hash (values kept below 2**32 in int64, so products never overflow)."""
    x = ((x ^ (x >> 16)) * 0x45D9F3B) & _M32
    x = ((x ^ (x >> 16)) * 0x45D9F3B) & _M32
    return x ^ (x >> 16)


def counter_uniform(keys: torch.Tensor, steps: torch.Tensor, vocab: int) -> torch.Tensor:
    """Uniform (0, 1) noise (n, V) that depends only on each row's key, token index and token id."""
    ids = torch.arange(vocab, device=keys.device, dtype=torch.int64)
    row = _mix32(_mix32(keys & _M32) ^ (steps & _M32))  # (n,)
    bits = _mix32((_mix32(row[:, None] ^ ids[None, :]) + 0x9E3779B9) & _M32)  # (n, V)
    return (bits.double() + 0.5) / 2.0**32


def row_key(seed: int, request_id: int, attempt: int) -> int:
    """The sampling key of one attempt at one request."""
    return (seed * 1_000_003 + request_id * 7_919 + attempt) & _M32


class Sampler:
    def __init__(self, rows: int, vocab: int, device: torch.device, penalties: bool) -> None:
        self.vocab = vocab
        self.penalty = torch.ones(rows, device=device)  # (B,)
        self.temperature = torch.zeros(rows, device=device)  # (B,)
        self.key = torch.zeros(rows, dtype=torch.int64, device=device)  # (B,)
        self.host = np.zeros((rows, 2))  # penalty, temperature: decides which work a step needs
        self.host[:, 0] = 1.0
        self.seen = torch.zeros(rows, vocab, dtype=torch.bool, device=device) if penalties else None

    def set_mode(self, row: int, mode: DecodeMode, key: int) -> None:
        if mode.repetition_penalty != 1.0 and self.seen is None:
            raise ValueError("this sampler was built without repetition penalties")
        self.host[row] = (mode.repetition_penalty, mode.temperature)
        self.penalty[row] = mode.repetition_penalty
        self.temperature[row] = mode.temperature
        self.key[row] = key

    def reset_row(self, row: int, tokens: list[int]) -> None:
        """Forget a row's history; `tokens` are the ones it has already generated."""
        if self.seen is not None:
            self.seen[row] = False
            if tokens:
                self.seen[row, torch.tensor(tokens, device=self.seen.device)] = True

    def note(self, tokens: torch.Tensor) -> None:
        """Rows 0..n-1 generated `tokens` (n,).

        Only rows with a penalty need their history, and a row's mode only gains a penalty when it
        is admitted (`reset_row` rebuilds it then), so steps without penalised rows skip this.
        """
        n = tokens.shape[0]
        if self.seen is not None and (self.host[:n, 0] != 1.0).any():
            rows = torch.arange(n, device=tokens.device)
            self.seen[rows, tokens] = True

    def note_row(self, row: int, token: torch.Tensor) -> None:
        """Row `row` generated `token` (1,)."""
        if self.seen is not None:
            self.seen[row, token] = True

    def choose(self, logits: torch.Tensor, first: int, steps: torch.Tensor) -> torch.Tensor:
        """Next tokens (n,) of rows first..first+n-1 from their logits (n, V) float32.

        `steps` (n,) is each row's index of the token being chosen (keys the sampling noise).
        """
        n = logits.shape[0]
        rows = slice(first, first + n)
        host = self.host[rows]
        if self.seen is not None and (host[:, 0] != 1.0).any():
            p = self.penalty[rows, None]
            penalised = torch.where(logits < 0, logits * p, logits / p)
            logits = torch.where(self.seen[rows], penalised, logits)
        greedy = logits.argmax(dim=-1)
        if not (host[:, 1] > 0).any():
            return greedy
        t = self.temperature[rows, None]
        gumbel = -torch.log(-torch.log(counter_uniform(self.key[rows], steps, self.vocab)))
        sampled = (logits.double() / t.clamp_min(1e-6) + gumbel).argmax(dim=-1)
        return torch.where(t[:, 0] > 0, sampled, greedy)

    def move_row(self, src: int, dst: int) -> None:
        self.host[dst] = self.host[src]
        for buf in (self.penalty, self.temperature, self.key, self.seen):
            if buf is not None:
                buf[dst] = buf[src]
