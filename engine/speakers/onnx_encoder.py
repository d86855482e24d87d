"""The exported GE2E speaker encoder on onnxruntime, without torch (exported by
`engine.speakers.ge2e_onnx`).

- `OnnxEncoder(path, threads)` runs such a model on onnxruntime's CPU provider (the runtime the
  silero VAD already uses); `embed(windows, batch_size)` matches `SpeakerEncoder.embed_mels`:
  (B, 160, 40) float32 mel windows in, (B, 256) float32 unit embeddings out.
- `bundled_model()` is the exported model shipped beside this module (a desktop bundle puts it
  there), or None; `SpeakerEncoder` uses it when present, and torch otherwise.
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


class OnnxEncoder:
    """The exported GE2E encoder on onnxruntime (CPU)."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        if threads < 1:
            raise ValueError("threads must be at least 1")
        try:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.inter_op_num_threads = 1
            options.intra_op_num_threads = threads
            self._session: Any = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # a missing file, a broken model or a broken onnxruntime
            raise ModelLoadError(f"could not load the speaker encoder from {path}: {exc}") from exc

    def embed(self, windows: np.ndarray, batch_size: int) -> np.ndarray:
        """Embeddings of (B, 160, 40) mel windows: float32 (B, 256), each of unit length."""
        pieces = [
            self._session.run(
                ["embeddings"], {"mels": np.ascontiguousarray(windows[a : a + batch_size], np.float32)}
            )[0]
            for a in range(0, len(windows), batch_size)
        ]  # each (b, 256)
        return np.concatenate(pieces).astype(np.float32) if pieces else np.empty((0, 256), np.float32)
