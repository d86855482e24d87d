"""The decode engine's settings, as plain torch-free values: batch, eviction, decoding mode, kernels.

`EngineConfig` nests the eviction settings whole (`eviction: EvictionConfig`) and the loop guard
(`loop: LoopGuardConfig`); nothing is flattened or renamed on the way. This module imports no
torch (nor anything that does), so the backend configs, the option table (`engine.options`) and
the app can build and validate an engine config cheaply; the modules that run it (`attention.py`,
`fused.py`, `sampling.py`, `loop_guard.py`) take their names and value types from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.decode.eviction import EvictionConfig

CPU_ROWS = 16  # rows on the CPU without a KV memory budget (its memory sets no limit)
BUDGET_ROWS = 1024  # rows at most when the KV memory budget decides (host bookkeeping is per row)
ATTENTION = ("auto", "sdpa", "flash-attn", "split-kv", "flashinfer")  # attention.py's backends
GLUE = ("auto", "plain", "compiled")  # fused.py's elementwise glue


@dataclass(frozen=True, slots=True)
class DecodeMode:
    """How one row picks its tokens (`sampling.py`)."""

    repetition_penalty: float = 1.0  # 1.0: off
    temperature: float = 0.0  # 0.0: greedy
    seed: int = 0  # sampling seed (with temperature > 0)

    def __post_init__(self) -> None:
        if not self.repetition_penalty > 0:
            raise ValueError("the repetition penalty must be positive")
        if not self.temperature >= 0:
            raise ValueError("the temperature must not be negative")


@dataclass(frozen=True, slots=True)
class LoopGuardConfig:
    """When a row counts as looping, and the retry schedule (`loop_guard.py`)."""

    enabled: bool = True
    max_period: int = 128  # longest repeated n-gram looked for (tokens)
    min_repeats: int = 4  # repetitions of an n-gram that make a loop ...
    min_tokens: int = 64  # ... spanning at least this many tokens
    retries: tuple[DecodeMode, ...] = (
        DecodeMode(repetition_penalty=1.15),
        DecodeMode(repetition_penalty=1.05, temperature=0.5, seed=1234),
    )

    def __post_init__(self) -> None:
        if self.max_period < 1 or self.min_repeats < 2 or self.min_tokens < 2:
            raise ValueError("loop detection needs max_period ≥ 1, min_repeats ≥ 2 and min_tokens ≥ 2")

    def window(self) -> int:
        """How many trailing tokens `find_loop` needs to see to detect any loop."""
        return max(self.min_tokens, self.min_repeats * self.max_period) + self.max_period


@dataclass(frozen=True, slots=True)
class EngineConfig:
    max_batch: int | None = None  # rows decoded together at most; None: the KV budget's choice (`rows`)
    eviction: EvictionConfig = field(default_factory=EvictionConfig)  # KV eviction (policy + settings)
    repetition_penalty: float = 1.0  # the base decoding mode (1.0: plain greedy)
    attention: str = "auto"  # one of ATTENTION
    cuda_graphs: bool = True  # replay captured decode steps on CUDA (sdpa and flash-attn backends)
    emulate_graphs: bool = False  # run the captured-step path eagerly on any device (tests, dry runs)
    glue: str = "auto"  # one of GLUE: compiled elementwise glue on CUDA, plain elsewhere
    loop: LoopGuardConfig = field(default_factory=LoopGuardConfig)
    kv_memory_limit: int | None = None  # bytes the KV store may take; None: what the device gives
    kv_slots: int | None = None  # slots per row to reserve (longest chunk); None: first batch's need

    def __post_init__(self) -> None:
        if self.max_batch is not None and self.max_batch < 1:
            raise ValueError("the batch must hold at least one request")
        if not self.repetition_penalty > 0:
            raise ValueError("the repetition penalty must be positive")
        if self.attention not in ATTENTION:
            raise ValueError(
                f"unknown attention backend {self.attention!r}; choose one of: {', '.join(ATTENTION)}"
            )
        if self.kv_memory_limit is not None and self.kv_memory_limit < 1:
            raise ValueError("the KV memory limit must be positive")
        if self.kv_slots is not None and self.kv_slots < 1:
            raise ValueError("the reserved KV slots must be positive")
        if self.glue not in GLUE:
            raise ValueError(f"unknown glue {self.glue!r}; choose one of: {', '.join(GLUE)}")
        if not isinstance(self.eviction, EvictionConfig):
            raise ValueError(
                "eviction must be an EvictionConfig (EvictionConfig.from_options(name, ...) for a "
                f"policy or preset name), got {self.eviction!r}"
            )

    def rows(self, cuda: bool) -> int:
        """The batch's row limit: `max_batch` when given; else as many rows as the KV memory budget
        holds (`kv_memory_limit`, or the free memory of a CUDA device; the store takes what it holds at
        the rows' size), up to `BUDGET_ROWS`; on the CPU without a budget `CPU_ROWS`."""
        if self.max_batch is not None:
            return self.max_batch
        return BUDGET_ROWS if self.kv_memory_limit is not None or cuda else CPU_ROWS

    @property
    def uses_penalties(self) -> bool:
        retries = self.loop.retries if self.loop.enabled else ()
        return any(m.repetition_penalty != 1.0 for m in retries) or self.repetition_penalty != 1.0
