"""Single-token attention over each row's visible KV prefix, without repeating KV heads.

Every backend answers one decode step for rows 0..n-1: query (n, Hq, D) against a layer's store
buffers (B, Hkv, C, D), where row b sees slots [0, seqlen[b]). `prepare` runs once per step (before
the layers) and `__call__` once per layer. Backends, by name (`ATTENTION`):

- `sdpa`: PyTorch SDPA on CPU and GPU. The Hq/Hkv query heads that share a KV head are folded into
  the query-length axis, (n, Hkv, G, D), so each KV head is read once and never copied
  (`repeat_kv` would copy it G times); ragged rows get a key mask only when lengths differ.
- `flash-attn`: `flash_attn_with_kvcache` with `cache_seqlens` (CUDA, package `flash-attn`).
- `flashinfer`: FlashInfer batch decode, each row one page of the store (CUDA, package `flashinfer`).

`auto` picks flash-attn on CUDA with float16/bfloat16 when the package is installed (the `[gpu]`
extra), and sdpa otherwise; FlashInfer is opt-in and runs eagerly (its `plan` is host work done
before the step, so its steps are never captured). `reads_lengths`: the kernel takes each row's
length itself, so a captured step serves every length (no length bucket, no mask). The optional
packages are imported only when chosen.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any, Protocol

import torch
import torch.nn.functional as F


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
        self.mask: torch.Tensor | None = None  # (n, 1, 1, L) key mask when rows differ in length

    def prepare(self, seqlen: torch.Tensor, length: int, ragged: bool, capacity: int) -> None:
        self.length = length
        keys = torch.arange(length, device=seqlen.device)
        self.mask = (keys[None, :] < seqlen[:, None])[:, None, None, :] if ragged else None

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


ATTENTION = ("auto", "sdpa", "flash-attn", "flashinfer")
_PACKAGES = {"flash-attn": "flash_attn", "flashinfer": "flashinfer"}


def available(name: str, device: torch.device, dtype: torch.dtype) -> bool:
    """Whether backend `name` can run on `device` with `dtype` here."""
    if name == "sdpa":
        return True
    half = dtype in (torch.float16, torch.bfloat16)
    return half and device.type == "cuda" and importlib.util.find_spec(_PACKAGES[name]) is not None


def make_attention(name: str, shape: AttentionShape, device: torch.device) -> Attention:
    """The backend called `name` ("auto": the fastest available on `device`)."""
    if name not in ATTENTION:
        raise ValueError(f"unknown attention backend {name!r}; choose one of: {', '.join(ATTENTION)}")
    if name == "auto":
        name = "flash-attn" if available("flash-attn", device, shape.dtype) else "sdpa"
    if not available(name, device, shape.dtype):
        raise ValueError(
            f"attention backend {name!r} needs CUDA, float16/bfloat16 and the {_PACKAGES[name]} package"
        )
    if name == "flashinfer":
        return FlashInferDecode(shape, device)
    if name == "flash-attn":
        return FlashAttn(shape)
    return SdpaFold(shape)
