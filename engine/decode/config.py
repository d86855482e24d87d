"""The engine's settings: batch size, eviction, decoding mode, attention backend, loop guard.

Fields map one to one onto command-line options (`--eviction`, `--sink`, `--window`,
`--output-window`, `--speech-window`, `--delay`,
`--speech-rate`, `--speech-sink`, `--speech-layers`, `--speech-cap`, `--look-back`, `--look-ahead`,
`--repetition-penalty`): `eviction` names a
policy or a preset (or is a full `EvictionConfig`), and the others override its values (None keeps
them). After construction `eviction` is always the resolved `EvictionConfig` (overrides applied,
idempotently, so `dataclasses.replace` works).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.decode.attention import ATTENTION
from engine.decode.eviction import EvictionConfig
from engine.decode.fused import GLUE
from engine.decode.loop_guard import LoopGuardConfig

CPU_ROWS = 16  # rows on the CPU without a KV memory budget (its memory sets no limit)
BUDGET_ROWS = 1024  # rows at most when the KV memory budget decides (host bookkeeping is per row)


@dataclass(frozen=True, slots=True)
class EngineConfig:
    max_batch: int | None = None  # rows decoded together at most; None: the KV budget's choice (`rows`)
    eviction: str | EvictionConfig = "none"  # a policy ("none", "output", "speech", "both") or preset
    sink: int | None = None  # output sink tokens
    window: int | None = None  # the policy's window, in tokens (not for `both`: it has two)
    output_window: int | None = None  # recent outputs kept (output, both)
    speech_window: int | None = None  # speech window (speech policies, both)
    delay: int | None = None  # decode steps before the speech window moves
    speech_rate: float | None = None  # speech tokens dropped (or moved) per decode step after the delay
    speech_sink: int | None = None  # pinned speech tokens
    speech_layers: str | list | None = None  # per-layer speech ranges: JSON text or list (LayerRange)
    speech_cap: str | None = None  # "row" or "batch-min" (the authors' batching; speech, both)
    look_back: int | None = None  # speech-anchor: speech tokens kept before the anchor
    look_ahead: int | None = None  # speech-anchor: last speech tokens always kept
    repetition_penalty: float = 1.0  # the base decoding mode (1.0: plain greedy)
    attention: str = "auto"  # one of attention.ATTENTION
    cuda_graphs: bool = True  # replay captured decode steps on CUDA (sdpa and flash-attn backends)
    emulate_graphs: bool = False  # run the captured-step path eagerly on any device (tests, dry runs)
    glue: str = "auto"  # one of fused.GLUE: compiled elementwise glue on CUDA, plain elsewhere
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
        options = {"sink": self.sink, "window": self.window, "delay": self.delay, "rate": self.speech_rate}
        options |= {
            "speech_sink": self.speech_sink,
            "layers": self.speech_layers,
            "speech_cap": self.speech_cap,
        }
        options |= {"look_back": self.look_back, "look_ahead": self.look_ahead}
        options |= {"output_window": self.output_window, "speech_window": self.speech_window}
        if isinstance(self.eviction, EvictionConfig):
            resolved = self.eviction.overridden(**options)
        else:
            resolved = EvictionConfig.from_options(self.eviction, **options)
        object.__setattr__(self, "eviction", resolved)

    @property
    def policy(self) -> EvictionConfig:
        """The resolved eviction settings."""
        if not isinstance(self.eviction, EvictionConfig):
            raise TypeError("unresolved eviction settings")
        return self.eviction

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
