"""Decode-time weights and glue: one GEMM for q|k|v, one for gate|up, residuals folded into GEMMs.

`FusedModel.from_parts` runs once per decoder. For every layer it concatenates the q, k and v
projections (weights and biases) and the gate and up projections, and repoints the model's own
`nn.Linear` modules at views of the fused tensors, so no weight is held twice and the stock HF
forward (prefill) keeps working unchanged. When the weights are already adjacent (a second
decoder over the same model) the fused tensor is a view of them and nothing is copied.

A decode step per layer is then, in operators: RMSNorm, addmm (q|k|v + bias), RoPE (3: mul, roll,
addcmul) over q, k and v at once — v's "rotation" is cos 1, sin 0, exact — so rotated k and v sit
side by side and reach the store in one `index_put_`, attention, addmm (o_proj + residual), RMSNorm,
mm (gate|up), SiLU, mul, addmm (down_proj + residual): 13 operators, 4 GEMMs.

`Glue` holds the elementwise pieces. `plain` is what runs on the CPU; `compiled` wraps the same
functions in `torch.compile` (one kernel each on CUDA). RMSNorm follows HF's rounding in float32
and float64 (normalise in float32, scale in the model dtype: bit for bit on the CPU); in half
precision it is one `rms_norm` with the weight applied before rounding (within one bf16 ulp of HF).
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from engine.decode.config import GLUE


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """HF's Qwen2 RMSNorm of x (n, d)."""
    shape = (x.shape[-1],)
    if x.dtype == torch.float64:  # HF normalises in float32, then scales in the model dtype
        return torch.rms_norm(x.float(), shape, eps=eps).to(x.dtype) * weight
    return torch.rms_norm(x, shape, weight, eps)


def rope(x: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor) -> torch.Tensor:
    """RoPE of x (n, H, D) with per-head tables (n, H, D); `signed_sin` has its first half negated.

    HF's `x·cos + rotate_half(x)·sin` with rotate_half(x) = [-x2, x1] equals
    `x·cos + roll(x, D/2)·[-sin1, sin2]` bit for bit (moving a sign is exact).
    """
    return torch.addcmul(x * cos, x.roll(x.shape[-1] // 2, dims=-1), signed_sin)


def silu_mul(gate_up: torch.Tensor) -> torch.Tensor:
    """SiLU(gate)·up of the fused (n, 2F) projection → (n, F)."""
    half = gate_up.shape[-1] // 2
    return F.silu(gate_up[:, :half]) * gate_up[:, half:]


@dataclass(frozen=True, slots=True)
class Glue:
    """The elementwise functions of a step (plain or compiled)."""

    norm: Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor]
    rope: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
    silu_mul: Callable[[torch.Tensor], torch.Tensor]

    @classmethod
    def make(cls, name: str, device: torch.device) -> Glue:
        """`plain`, `compiled`, or `auto` (compiled on CUDA with Triton, plain elsewhere)."""
        if name not in GLUE:
            raise ValueError(f"unknown glue {name!r}; choose one of: {', '.join(GLUE)}")
        plain = device.type != "cuda" or importlib.util.find_spec("triton") is None
        if name == "plain" or (name == "auto" and plain):
            return cls(rms_norm, rope, silu_mul)
        return cls(_Compiled(rms_norm), _Compiled(rope), _Compiled(silu_mul))


class _Compiled:
    """`torch.compile(fn)`, falling back to `fn` itself (with a warning) if compiling fails, so a
    device whose compiler stack is broken still decodes, on the plain glue. Out of memory is not a
    broken compiler: it is raised (the decoder re-sizes and resumes), and so is any error while a
    CUDA graph is being captured (the capture is invalid; falling back would hide the cause)."""

    def __init__(self, fn: Callable[..., torch.Tensor]) -> None:
        self.fn, self.compiled = fn, torch.compile(fn, dynamic=True)

    def __call__(self, *args: object) -> torch.Tensor:
        if self.compiled is not None:
            try:
                out: torch.Tensor = self.compiled(*args)
                return out
            except torch.OutOfMemoryError:
                raise
            except Exception as exc:  # inductor/triton failures have no common type
                if capturing():
                    raise
                warnings.warn(
                    f"compiled {self.fn.__name__} failed ({exc!r}); using the plain one", stacklevel=2
                )
                self.compiled = None
        return self.fn(*args)


def capturing() -> bool:
    """Whether the current CUDA stream is capturing a graph."""
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


@dataclass(frozen=True, slots=True, eq=False)
class FusedLayer:
    input_norm: torch.Tensor  # (d,)
    qkv_t: torch.Tensor  # (d, (Hq + 2·Hkv)·D) transposed view of the fused q|k|v weight
    qkv_bias: torch.Tensor  # ((Hq + 2·Hkv)·D,) zeros when the model has no bias
    o_t: torch.Tensor  # (Hq·D, d)
    post_norm: torch.Tensor  # (d,)
    gate_up_t: torch.Tensor  # (d, 2F)
    down_t: torch.Tensor  # (F, d)
    eps: float


@dataclass(frozen=True, slots=True, eq=False)
class FusedModel:
    layers: tuple[FusedLayer, ...]
    final_norm: torch.Tensor  # (d,)
    final_eps: float
    glue: Glue

    @classmethod
    def from_parts(cls, backbone: nn.Module, device: torch.device, glue: str = "auto") -> FusedModel:
        with torch.no_grad():
            layers = tuple(_fuse_layer(layer) for layer in backbone.layers)
        norm = backbone.norm
        return cls(layers, norm.weight, norm.variance_epsilon, Glue.make(glue, device))


def _fuse_layer(layer: nn.Module) -> FusedLayer:
    attn, mlp = layer.self_attn, layer.mlp
    projections = (attn.q_proj, attn.k_proj, attn.v_proj)
    qkv = fuse_rows([p.weight for p in projections])
    if all(p.bias is not None for p in projections):
        bias = fuse_rows([p.bias for p in projections])
        _repoint(projections, qkv, bias)
    else:
        bias = torch.zeros(qkv.shape[0], dtype=qkv.dtype, device=qkv.device)
        _repoint(projections, qkv, None)
    gate_up = fuse_rows([mlp.gate_proj.weight, mlp.up_proj.weight])
    _repoint((mlp.gate_proj, mlp.up_proj), gate_up, None)
    return FusedLayer(
        input_norm=layer.input_layernorm.weight,
        qkv_t=qkv.t(),
        qkv_bias=bias,
        o_t=attn.o_proj.weight.t(),
        post_norm=layer.post_attention_layernorm.weight,
        gate_up_t=gate_up.t(),
        down_t=mlp.down_proj.weight.t(),
        eps=layer.input_layernorm.variance_epsilon,
    )


def fuse_rows(parts: list[torch.Tensor]) -> torch.Tensor:
    """Tensors stacked along dim 0: a view when they already lie back to back, else a new tensor."""
    first = parts[0]
    rows = sum(p.shape[0] for p in parts)
    offset, adjacent = first.storage_offset(), True
    for p in parts:
        same = p.untyped_storage().data_ptr() == first.untyped_storage().data_ptr()
        adjacent &= same and p.is_contiguous() and p.storage_offset() == offset
        offset += p.numel()
    if adjacent:
        view = torch.empty(0, dtype=first.dtype, device=first.device)
        view.set_(first.untyped_storage(), first.storage_offset(), (rows, *first.shape[1:]))
        return view
    return torch.cat([p.detach() for p in parts])


def _repoint(modules: tuple[nn.Module, ...], weight: torch.Tensor, bias: torch.Tensor | None) -> None:
    """Make each module's weight (and bias) a view of its rows of the fused tensors."""
    start = 0
    for module in modules:
        rows = module.weight.shape[0]
        module.weight.data = weight[start : start + rows]
        if bias is not None:
            module.bias.data = bias[start : start + rows]
        start += rows
