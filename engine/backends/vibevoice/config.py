"""Settings of the VibeVoice-ASR backend: which checkpoint, where it runs, how it decodes.

`VibeVoiceConfig` is a frozen dataclass validated on construction (`ValueError` on a bad value);
every field has a default, and CLI flags map onto fields one to one. This module imports neither
torch nor transformers, so building a config (e.g. from GUI settings) is cheap.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields, replace
from typing import Any

from engine.decode.config import EngineConfig, LoopGuardConfig

DEFAULT_MODEL = "microsoft/VibeVoice-ASR-HF"
SAMPLE_RATE = 24000  # the acoustic tokenizer's rate: audio is decoded straight to it
MAX_TOKENS = 32768  # the checkpoint's own generation limit (one hour of dense speech)

DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("auto", "float32", "bfloat16", "float16")
ATTENTIONS = ("sdpa", "eager", "flash_attention_2")
ACOUSTIC_MODES = ("mean", "seeded", "sampled")
ENGINES = ("hf", "murmur", "server")  # server: a VibeVoice vLLM server (server_client.py)
BUDGETS = ("paper", "murmur", "max")
_CUDA_INDEX = re.compile(r"cuda:\d+")


@dataclass(frozen=True, slots=True)
class VibeVoiceConfig:
    """How to load and run VibeVoice-ASR. See docs/vibevoice.md for each setting."""

    model: str = DEFAULT_MODEL  # a hub id or a local folder holding the HF-format checkpoint
    device: str = "auto"  # auto (CUDA when present), cpu, cuda or cuda:N
    dtype: str = "auto"  # auto: bfloat16 on CUDA, float32 on the CPU
    attention: str = "sdpa"  # the language model's attention kernel
    batch_size: int | None = (
        None  # chunks decoded together at most; None: murmur's KV budget decides, else 16
    )
    context: tuple[str, ...] = ()  # names and terms the user expects, stated in the prompt
    offline: bool | None = None  # None: offline exactly when HF_HUB_OFFLINE is set
    engine: str = "murmur"  # the decoder: "murmur" (engine.decode) or "hf" (transformers generate)
    budget: str = "paper"  # token budget rule per chunk (engine.backends.vibevoice.budget)
    min_new_tokens: int = 256  # floor of every chunk's token budget
    max_new_tokens: int = MAX_TOKENS  # ceiling of every chunk's token budget
    acoustic: str = "mean"  # mean (deterministic), seeded (noise from `seed`), sampled (fresh noise)
    seed: int = 0  # the noise seed of acoustic="seeded"
    encoder_segment_seconds: float = 60.0  # audio encoded in causal segments of this length
    loop_recovery: bool = True  # False: a looping chunk decodes on to its budget (the paper)
    decode: EngineConfig = field(default_factory=EngineConfig)  # Murmur's decode engine (engine="murmur")
    # engine="server": an OpenAI-compatible VibeVoice server (the vLLM plugin) does the decoding
    server: str | None = None  # its base URL, e.g. http://gpu-box:8000
    concurrency: int = 8  # requests in flight
    server_model: str = "vibevoice"  # the served model name (the plugin's --served-model-name)
    server_timeout: float = 900.0  # seconds one request may take
    server_retries: int = 2  # further tries after a connection error, a timeout or a 5xx/429

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ValueError("the model must be a hub id or a folder, got an empty name")
        if self.device not in DEVICES and not _CUDA_INDEX.fullmatch(self.device):
            raise ValueError(f"device must be one of {', '.join(DEVICES)} or cuda:N, got {self.device!r}")
        _choice("dtype", self.dtype, DTYPES)
        _choice("attention", self.attention, ATTENTIONS)
        _choice("acoustic mode", self.acoustic, ACOUSTIC_MODES)
        _choice("decode engine", self.engine, ENGINES)
        _choice("token budget", self.budget, BUDGETS)
        if self.batch_size is not None and self.batch_size < 1:
            raise ValueError(f"batch size must be at least 1, got {self.batch_size}")
        if not 1 <= self.min_new_tokens <= self.max_new_tokens:
            raise ValueError(
                f"token budget bounds must satisfy 1 <= min ({self.min_new_tokens}) "
                f"<= max ({self.max_new_tokens})"
            )
        if self.seed < 0:
            raise ValueError(f"seed must be zero or positive, got {self.seed}")
        if not 1.0 <= self.encoder_segment_seconds <= 600.0:
            raise ValueError(f"encoder segments must last 1–600 s, got {self.encoder_segment_seconds}")
        terms = self.context.split(",") if isinstance(self.context, str) else self.context
        if any(not isinstance(t, str) for t in terms):
            raise ValueError("context must be a sequence of strings")
        object.__setattr__(self, "context", tuple(terms))  # a list or "a, b" becomes a tuple
        _check_server(self)
        changed = engine_changes(self.decode)
        if changed and self.engine != "murmur":
            verb = "applies" if len(changed) == 1 else "apply"
            raise ValueError(f"{', '.join(changed)} only {verb} to Murmur's decode engine (--engine murmur)")

    @property
    def is_offline(self) -> bool:
        """Whether loading may only use local files (the field, else the HF_HUB_OFFLINE variable)."""
        if self.offline is not None:
            return self.offline
        return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")

    @property
    def decoder_options(self) -> dict[str, Any]:
        """The chosen decoder's config fields (`decoders.create_decoder`): Murmur's engine takes
        `decode` whole; either decoder is told to keep a looping chunk when `loop_recovery` is off."""
        no_loops = LoopGuardConfig(enabled=False)
        if self.engine != "murmur":
            return {} if self.loop_recovery else {"loops": no_loops}
        decode = self.decode if self.loop_recovery else replace(self.decode, loop=no_loops)
        return {f.name: getattr(decode, f.name) for f in fields(decode) if f.name != "max_batch"}

    @property
    def context_text(self) -> str | None:
        """The context terms as the prompt states them ("Alice, Kubernetes"), or None."""
        terms = [t.strip() for t in self.context if t.strip()]
        return ", ".join(terms) or None


def engine_changes(decode: EngineConfig) -> list[str]:
    """The decode-engine settings that differ from the engine's defaults, by field name."""
    default = EngineConfig()
    return [f.name for f in fields(decode) if getattr(decode, f.name) != getattr(default, f.name)]


def _check_server(cfg: VibeVoiceConfig) -> None:
    if (cfg.engine == "server") != (cfg.server is not None):
        raise ValueError("--engine server and --server URL go together: give both or neither")
    if cfg.server is not None and not re.fullmatch(r"https?://[^\s/]+(/\S*)?", cfg.server):
        raise ValueError(f"the server must be an http:// or https:// URL, got {cfg.server!r}")
    if not 1 <= cfg.concurrency <= 1024:
        raise ValueError(f"concurrency must be within 1–1024, got {cfg.concurrency}")
    if cfg.server_timeout <= 0:
        raise ValueError(f"the server timeout must be positive, got {cfg.server_timeout}")
    if not 0 <= cfg.server_retries <= 10:
        raise ValueError(f"server retries must be within 0–10, got {cfg.server_retries}")


def _choice(what: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}, got {value!r}")
