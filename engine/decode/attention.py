"""Single-token attention over each row's visible KV prefix, without repeating KV heads.

Every backend answers one decode step for rows 0..n-1: query (n, Hq, D) against a layer's store
buffers (B, Hkv, C, D), where row b sees slots [0, seqlen[b]). `prepare` runs once per step (before
the layers) and `__call__` once per layer. Backends, by name (`ATTENTION`):

- `sdpa`: PyTorch SDPA on CPU and GPU. The Hq/Hkv query heads that share a KV head are folded into
  the query-length axis, (n, Hkv, G, D), so each KV head is read once and never copied
  (`repeat_kv` would copy it G times); ragged rows get a key mask only when lengths differ.
- `flash-attn`: `flash_attn_with_kvcache` with `cache_seqlens` (CUDA, package `flash-attn`).
- `flashinfer`: FlashInfer batch decode, each row one page of the store (CUDA, package `flashinfer`).
- `split-kv`: our Triton split-KV decode kernel (`split_kv.py`): CUDA with Triton, or the CPU under
  Triton's interpreter (`TRITON_INTERPRET=1`, tests only).

`auto` picks flash-attn on CUDA with float16/bfloat16 when the package imports *and* a probe call
runs, else split-kv on CUDA when Triton imports and its probe call runs, else sdpa. A flash-attn
that is installed but broken (built for another torch: undefined symbols at import) is skipped with
one warning, never a crash. FlashInfer is opt-in and runs eagerly (its `plan` is host work done
before the step, so its steps are never captured). `reads_lengths`: the kernel takes each row's
length itself, so a captured step serves every length (no length bucket, no mask). The optional
packages are imported only when chosen.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import torch
import torch.nn.functional as F

from engine.decode.config import ATTENTION


@dataclass(frozen=True, slots=True)
class AttentionShape:
    q_heads: int
    kv_heads: int
    head_dim: int
    scale: float
    dtype: torch.dtype


class Attention(Protocol):
    name: str
    reads_lengths: bool

    def prepare(self, seqlen: torch.Tensor, length: int, ragged: bool, capacity: int) -> None:
        """Per-step setup: visible slots per row (n,), their maximum, whether they differ, capacity C."""
        ...

    def __call__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """q (n, Hq, D); k, v (B, Hkv, C, D) one layer of the store → (n, Hq, D)."""
        ...


class SdpaFold:
    name = "sdpa"
    reads_lengths = False

    def __init__(self, shape: AttentionShape) -> None:
        self.shape = shape
        self.length = 0
        self.mask: torch.Tensor | None = None  # (n, 1, 1, L) additive key bias when rows differ in length

    def prepare(self, seqlen: torch.Tensor, length: int, ragged: bool, capacity: int) -> None:
        self.length = length
        self.mask = None
        if ragged:  # an additive bias, built once per step (SDPA would convert a bool mask per layer)
            keys = torch.arange(length, device=seqlen.device)
            hidden = (keys[None, :] >= seqlen[:, None])[:, None, None, :]  # (n, 1, 1, L)
            zeros = torch.zeros(hidden.shape, dtype=self.shape.dtype, device=seqlen.device)
            self.mask = zeros.masked_fill_(hidden, float("-inf"))

    def __call__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        n, hq, d = q.shape
        hkv = self.shape.kv_heads
        keys, values = k[:n, :, : self.length], v[:n, :, : self.length]  # (n, Hkv, L, D) views
        qg = q.view(n, hkv, hq // hkv, d)  # (n, Hkv, G, D): query groups share one KV head
        out = F.scaled_dot_product_attention(qg, keys, values, attn_mask=self.mask, scale=self.shape.scale)
        return out.reshape(n, hq, d)


class FlashAttn:
    name = "flash-attn"
    reads_lengths = True

    def __init__(self, shape: AttentionShape) -> None:
        from flash_attn import flash_attn_with_kvcache

        self.kernel = flash_attn_with_kvcache
        self.shape = shape
        self.seqlen = torch.zeros(0, dtype=torch.int32)

    def prepare(self, seqlen: torch.Tensor, length: int, ragged: bool, capacity: int) -> None:
        self.seqlen = seqlen.to(torch.int32)

    def __call__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        n = q.shape[0]
        cache_k, cache_v = k[:n].transpose(1, 2), v[:n].transpose(1, 2)  # (n, C, Hkv, D) views
        out = self.kernel(
            q[:, None], cache_k, cache_v, cache_seqlens=self.seqlen, softmax_scale=self.shape.scale
        )
        return out[:, 0]


class FlashInferDecode:
    name = "flashinfer"
    reads_lengths = True

    def __init__(self, shape: AttentionShape, device: torch.device) -> None:
        import flashinfer

        workspace = torch.empty(128 * 1024 * 1024, dtype=torch.uint8, device=device)
        self.wrapper: Any = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
            workspace, "HND", use_tensor_cores=True
        )
        self.shape = shape

    def prepare(self, seqlen: torch.Tensor, length: int, ragged: bool, capacity: int) -> None:
        n = seqlen.shape[0]
        pages = torch.arange(n + 1, dtype=torch.int32, device=seqlen.device)  # row b is page b
        self.wrapper.plan(
            pages,
            pages[:n],
            seqlen.to(torch.int32),
            self.shape.q_heads,
            self.shape.kv_heads,
            self.shape.head_dim,
            capacity,
            q_data_type=self.shape.dtype,
            kv_data_type=self.shape.dtype,
            sm_scale=self.shape.scale,
        )

    def __call__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.wrapper.run(q, (k, v))
        return out


class SplitKV:
    name = "split-kv"
    reads_lengths = True

    def __init__(self, shape: AttentionShape, device: torch.device) -> None:
        from engine.decode import split_kv

        self.kernel = split_kv
        self.shape = shape
        cuda = device.type == "cuda"
        sms = torch.cuda.get_device_properties(device).multi_processor_count if cuda else 2
        self.programs = split_kv.PROGRAMS_PER_SM * sms  # stage-1 programs resident at once
        self.seqlen = torch.zeros(0, dtype=torch.int32)
        self.splits = 1
        self.scratch: tuple[torch.Tensor, torch.Tensor] | None = None  # partial outputs, log-sum-exps

    def prepare(self, seqlen: torch.Tensor, length: int, ragged: bool, capacity: int) -> None:
        n, shape = seqlen.shape[0], self.shape
        self.seqlen = seqlen.to(torch.int32)
        self.splits = self.kernel.split_count(capacity, n, shape.kv_heads, self.programs)
        partial = torch.empty(n, shape.q_heads, self.splits, shape.head_dim, device=seqlen.device)
        lse = torch.empty(n, shape.q_heads, self.splits, device=seqlen.device)
        self.scratch = (partial, lse)  # (n, Hq, S, D), (n, Hq, S) float32, shared by the group's layers

    def __call__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        partial, lse = self.scratch if self.scratch is not None else (None, None)
        return self.kernel.decode_attention(q, k, v, self.seqlen, self.shape.scale, self.splits, partial, lse)


_PACKAGES = {"flash-attn": "flash_attn", "flashinfer": "flashinfer", "split-kv": "triton"}


def available(name: str, device: torch.device, dtype: torch.dtype) -> bool:
    """Whether backend `name` can run on `device` with `dtype` here (its package is installed)."""
    if name == "sdpa":
        return True
    if importlib.util.find_spec(_PACKAGES[name]) is None:
        return False
    if name == "split-kv":
        interpreted = device.type == "cpu" and os.environ.get("TRITON_INTERPRET") == "1"
        return device.type == "cuda" or interpreted
    return dtype in (torch.float16, torch.bfloat16) and device.type == "cuda"


def probe(name: str, make: Callable[[], Attention], shape: AttentionShape, device: torch.device) -> bool:
    """Whether backend `name` builds and answers one tiny call; warns (once per message) if not."""
    try:
        attention = make()
        q = torch.zeros(1, shape.q_heads, shape.head_dim, dtype=shape.dtype, device=device)
        k = torch.zeros(1, shape.kv_heads, 64, shape.head_dim, dtype=shape.dtype, device=device)
        seqlen = torch.ones(1, dtype=torch.int64, device=device)
        attention.prepare(seqlen, 1, False, 64)
        attention(q, k, k)
    except Exception as exc:  # a broken build fails in any way: ImportError, OSError, RuntimeError
        first = str(exc).splitlines()[0] if str(exc) else ""
        warnings.warn(f"attention backend {name!r} does not run here ({type(exc).__name__}: {first}); "
                      "falling back", RuntimeWarning, stacklevel=3)  # fmt: skip
        return False
    return True


def imports(name: str) -> bool:
    """Whether the package of an installed backend imports; warns (once per message) if it does not."""
    try:
        importlib.import_module(_PACKAGES[name])
    except Exception as exc:  # undefined symbols of a wheel built for another torch, a missing .so, ...
        first = str(exc).splitlines()[0] if str(exc) else ""
        warnings.warn(f"{_PACKAGES[name]} is installed but does not import ({type(exc).__name__}: {first}); "
                      "attention falls back", RuntimeWarning, stacklevel=3)  # fmt: skip
        return False
    return True


def _build(name: str, shape: AttentionShape, device: torch.device) -> Attention:
    if name == "flashinfer":
        return FlashInferDecode(shape, device)
    if name == "flash-attn":
        return FlashAttn(shape)
    if name == "split-kv":
        return SplitKV(shape, device)
    return SdpaFold(shape)


def choose(shape: AttentionShape, device: torch.device) -> str:
    """`auto`'s choice: the first of flash-attn, split-kv (CUDA only) that imports and runs a probe."""
    for name in ("flash-attn", "split-kv"):
        if name == "split-kv" and device.type != "cuda":
            continue  # the interpreter is for tests, never a default
        if importlib.util.find_spec(_PACKAGES[name]) is None or not imports(name):
            continue  # a broken install warns on any device
        if not available(name, device, shape.dtype):
            continue
        if probe(name, lambda n=name: _build(n, shape, device), shape, device):
            return name
    return "sdpa"


def make_attention(name: str, shape: AttentionShape, device: torch.device) -> Attention:
    """The backend called `name` ("auto": the fastest that runs on `device`, see `choose`)."""
    if name not in ATTENTION:
        raise ValueError(f"unknown attention backend {name!r}; choose one of: {', '.join(ATTENTION)}")
    if name == "auto":
        name = choose(shape, device)
    if not available(name, device, shape.dtype):
        need = "CUDA (or TRITON_INTERPRET=1 on the CPU)" if name == "split-kv" else "CUDA, float16/bfloat16"
        raise ValueError(f"attention backend {name!r} needs {need} and the {_PACKAGES[name]} package")
    return _build(name, shape, device)
