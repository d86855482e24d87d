"""The exported GE2E speaker encoder on onnxruntime, without torch (exported by
`engine.speakers.ge2e_onnx`).

- `OnnxEncoder(path, threads)` runs such a model on onnxruntime's CPU provider (the runtime the
  silero VAD already uses); `embed(windows, batch_size)` matches `SpeakerEncoder.embed_mels`:
  (B, 160, 40) float32 mel windows in, (B, 256) float32 unit embeddings out.
  The model may also be given as bytes: `SpeakerEncoder` builds it in memory from resemblyzer's
  weights (`engine.speakers.ge2e_graph`) when no exported file is shipped.
- `bundled_model()` is the exported model shipped beside this module (a desktop bundle puts it
  there), or None; `SpeakerEncoder` uses it when present.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import ModelLoadError

MODEL_NAME = "ge2e.onnx"


def bundled_model() -> Path | None:
    """The exported encoder beside this module, or None when this install has none."""
    path = Path(__file__).with_name(MODEL_NAME)
    return path if path.is_file() else None


EMBEDDING_DIM = 256


class OnnxEncoder:
    """The exported GE2E encoder on onnxruntime (CPU)."""

    def __init__(self, path: Path | bytes, threads: int = 1) -> None:
        if threads < 1:
            raise ValueError("threads must be at least 1")
        try:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.inter_op_num_threads = 1
            options.intra_op_num_threads = threads
            self._session: Any = ort.InferenceSession(
                path if isinstance(path, bytes) else str(path),
                sess_options=options,
                providers=["CPUExecutionProvider"],
            )
        except Exception as exc:  # a missing file, a broken model or a broken onnxruntime
            where = "memory" if isinstance(path, bytes) else path
            raise ModelLoadError(f"could not load the speaker encoder from {where}: {exc}") from exc

    def embed(self, windows: np.ndarray, batch_size: int) -> np.ndarray:
        """Embeddings of (B, 160, 40) mel windows: float32 (B, 256), each of unit length."""
        out = np.empty((len(windows), EMBEDDING_DIM), np.float32)
        for a in range(0, len(windows), batch_size):
            batch = np.ascontiguousarray(windows[a : a + batch_size], dtype=np.float32)
            out[a : a + len(batch)] = self._session.run(["embeddings"], {"mels": batch})[0]
        return out
