"""The GE2E speaker encoder as an ONNX model, written from resemblyzer's weights without torch or onnx.

Contract:
- `read_weights(path)` reads the tensors of resemblyzer's `pretrained.pt` (torch's legacy
  serialization: a pickle whose tensors point into raw storages that follow it) into numpy
  arrays by name, without importing torch. Anything else raises `ModelLoadError`.
- `encoder_model(weights)` is the serialized ONNX model (bytes) of the encoder those weights
  define: input `mels` float32 (B, 160, 40), output `embeddings` float32 (B, 256) — three LSTM
  layers (hidden 256), the last hidden state through linear + ReLU, then L2 normalisation
  (clamped at 1e-9), as `engine.speakers.embedding._build_network` computes it on torch.
  onnxruntime runs it (`engine.speakers.onnx_encoder.OnnxEncoder`), so the default speaker path
  imports neither torch (≈0.7 GB resident, seconds to import) nor onnx.
The protobuf is written by hand (`_Proto`): the few ONNX message fields used are listed there.
"""

from __future__ import annotations

import collections
import pickle
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

import numpy as np

from engine.errors import ModelLoadError

HIDDEN = 256
LAYERS = 3
OPSET = 17
IR_VERSION = 8
_STORAGES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "LongStorage": np.int64,
             "IntStorage": np.int32, "HalfStorage": np.float16, "ByteStorage": np.uint8}  # fmt: skip
_TORCH_GATES = (0, 3, 1, 2)  # torch stores LSTM gates i, f, g, o; ONNX wants i, o, f, g (c)


class _Storage:
    def __init__(self, dtype: type, numel: int) -> None:
        self.dtype, self.numel = dtype, numel
        self.data: np.ndarray | None = None


class _TensorRef:
    """A tensor whose storage is read after the pickle (torch's `_rebuild_tensor_v2` arguments)."""

    def __init__(self, storage: _Storage, offset: int, size: tuple, stride: tuple, *_: Any) -> None:
        self.storage, self.offset, self.size, self.stride = storage, offset, tuple(size), tuple(stride)

    def array(self) -> np.ndarray:
        data = self.storage.data
        if data is None:
            raise ModelLoadError("a tensor's storage is missing from the speaker encoder's weights")
        item = data.itemsize
        view = np.lib.stride_tricks.as_strided(
            data[self.offset :], self.size, [s * item for s in self.stride]
        )
        return np.array(view)


class _Unpickler(pickle.Unpickler):
    """Rebuilds tensors as `_TensorRef`s and refuses every other class (no code runs)."""

    def __init__(self, file: BinaryIO, storages: dict[str, _Storage]) -> None:
        super().__init__(file)
        self.storages = storages

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return _TensorRef
        if module == "torch" and name in _STORAGES:
            return name
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        raise pickle.UnpicklingError(f"unexpected {module}.{name} in the speaker encoder's weights")

    def persistent_load(self, pid: Any) -> _Storage:
        _, kind, key, _location, numel, _view = pid
        return self.storages.setdefault(key, _Storage(_STORAGES[kind], numel))


def read_weights(path: Path) -> dict[str, np.ndarray]:
    """The `model_state` tensors of a legacy-format torch checkpoint, as numpy arrays by name."""
    try:
        with open(path, "rb") as f:
            for _ in range(3):  # magic number, protocol version, system info
                pickle.load(f)
            storages: dict[str, _Storage] = {}
            state = _Unpickler(f, storages).load()["model_state"]
            for key in pickle.load(f):
                s = storages[key]
                count = int(np.frombuffer(f.read(8), "<i8")[0])
                s.data = np.frombuffer(f.read(count * np.dtype(s.dtype).itemsize), s.dtype)
                if count != s.numel or len(s.data) != count:
                    raise ModelLoadError(f"the speaker encoder's weights in {path} are truncated")
        return {name: ref.array() for name, ref in state.items()}
    except (OSError, pickle.UnpicklingError, EOFError, KeyError, TypeError, ValueError) as exc:
        raise ModelLoadError(f"could not read the speaker encoder's weights from {path}: {exc}") from exc


def encoder_model(weights: dict[str, np.ndarray]) -> bytes:
    """The serialized ONNX model of the GE2E encoder (see the module contract)."""
    P = _Proto
    inits, nodes = [], [P.node("Transpose", ["mels"], ["x0"], P.ints_attr("perm", [1, 0, 2]))]  # (160, B, 40)
    inits.append(P.tensor("axis1", np.array([1], np.int64)))
    inits.append(P.tensor("axis0", np.array([0], np.int64)))
    for k in range(LAYERS):
        w, r = (_gates(weights[f"lstm.weight_{kind}_l{k}"])[None] for kind in ("ih", "hh"))  # (1, 1024, in)
        b = np.concatenate([_gates(weights[f"lstm.bias_{kind}_l{k}"]) for kind in ("ih", "hh")])[None]
        inits += [P.tensor(f"w{k}", w), P.tensor(f"r{k}", r), P.tensor(f"b{k}", b)]
        size = P.int_attr("hidden_size", HIDDEN)
        nodes.append(P.node("LSTM", [f"x{k}", f"w{k}", f"r{k}", f"b{k}"], [f"y{k}", f"h{k}"], size))
        nodes.append(P.node("Squeeze", [f"y{k}", "axis1"], [f"x{k + 1}"]))  # (160, B, 256)
    last = f"h{LAYERS - 1}"  # (1, B, 256)
    inits += [P.tensor("lin_w", weights["linear.weight"]), P.tensor("lin_b", weights["linear.bias"]),
              P.tensor("eps", np.array(1e-9, np.float32))]  # fmt: skip
    nodes += [
        P.node("Squeeze", [last, "axis0"], ["hidden"]),  # (B, 256)
        P.node("Gemm", ["hidden", "lin_w", "lin_b"], ["linear"], P.int_attr("transB", 1)),
        P.node("Relu", ["linear"], ["raw"]),
        P.node("ReduceL2", ["raw"], ["norm"], P.ints_attr("axes", [1]), P.int_attr("keepdims", 1)),
        P.node("Max", ["norm", "eps"], ["clamped"]),
        P.node("Div", ["raw", "clamped"], ["embeddings"]),
    ]
    graph = b"".join(
        [*(P.field(1, n) for n in nodes), P.field(2, b"ge2e"), *(P.field(5, t) for t in inits),
         P.field(11, P.value_info("mels", ["batch", 160, 40])),
         P.field(12, P.value_info("embeddings", ["batch", HIDDEN]))]
    )  # fmt: skip
    opset = P.field(1, b"") + P.varint_field(2, OPSET)
    return P.varint_field(1, IR_VERSION) + P.field(2, b"murmur") + P.field(7, graph) + P.field(8, opset)


def _gates(x: np.ndarray) -> np.ndarray:
    """torch's gate blocks (i, f, g, o) along the first axis, reordered to ONNX's (i, o, f, c)."""
    blocks = np.split(np.asarray(x, np.float32), 4)
    return np.concatenate([blocks[g] for g in _TORCH_GATES])


class _Proto:
    """The ONNX protobuf messages used above, field numbers from onnx.proto: ModelProto (ir_version 1,
    producer_name 2, graph 7, opset_import 8), GraphProto (node 1, name 2, initializer 5, input 11,
    output 12), NodeProto (input 1, output 2, op_type 4, attribute 5), AttributeProto (name 1, i 3,
    ints 8, type 20), TensorProto (dims 1, data_type 2, name 8, raw_data 9), ValueInfoProto (name 1,
    type 2) → TypeProto (tensor_type 1) → Tensor (elem_type 1, shape 2) → dim 1 (value 1, param 2)."""

    ELEM: ClassVar[dict[np.dtype, int]] = {np.dtype(np.float32): 1, np.dtype(np.int64): 7}

    @staticmethod
    def varint(value: int) -> bytes:
        value &= (1 << 64) - 1  # negative int64s as two's complement
        out = bytearray()
        while True:
            byte, value = value & 0x7F, value >> 7
            out.append(byte | (0x80 if value else 0))
            if not value:
                return bytes(out)

    @classmethod
    def varint_field(cls, number: int, value: int) -> bytes:
        return cls.varint(number << 3) + cls.varint(value)

    @classmethod
    def field(cls, number: int, payload: bytes | str) -> bytes:
        data = payload.encode() if isinstance(payload, str) else payload
        return cls.varint(number << 3 | 2) + cls.varint(len(data)) + data

    @classmethod
    def node(cls, op: str, inputs: list[str], outputs: list[str], *attributes: bytes) -> bytes:
        parts = [*(cls.field(1, i) for i in inputs), *(cls.field(2, o) for o in outputs), cls.field(4, op)]
        return b"".join([*parts, *(cls.field(5, a) for a in attributes)])

    @classmethod
    def int_attr(cls, name: str, value: int) -> bytes:
        return cls.field(1, name) + cls.varint_field(3, value) + cls.varint_field(20, 2)

    @classmethod
    def ints_attr(cls, name: str, values: list[int]) -> bytes:
        return cls.field(1, name) + b"".join(cls.varint_field(8, v) for v in values) + cls.varint_field(20, 7)

    @classmethod
    def tensor(cls, name: str, array: np.ndarray) -> bytes:
        a = np.ascontiguousarray(array)
        dims = b"".join(cls.varint_field(1, d) for d in a.shape)
        raw = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        return dims + cls.varint_field(2, cls.ELEM[a.dtype]) + cls.field(8, name) + cls.field(9, raw)

    @classmethod
    def value_info(cls, name: str, shape: list[int | str]) -> bytes:
        dims = b"".join(
            cls.field(1, cls.field(2, d) if isinstance(d, str) else cls.varint_field(1, d)) for d in shape
        )
        tensor = cls.varint_field(1, 1) + cls.field(2, dims)  # float32
        return cls.field(1, name) + cls.field(2, cls.field(1, tensor))
