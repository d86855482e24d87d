"""The GE2E speaker encoder as ONNX: export it from resemblyzer's weights and check it against torch.

Contract:
- `export(out)` writes the encoder of `engine.speakers.embedding` (3-layer LSTM + linear + ReLU +
  L2 norm, resemblyzer's `pretrained.pt`) as an ONNX graph with a dynamic batch: input `mels`
  float32 (B, 160, 40), output `embeddings` float32 (B, 256); `engine.speakers.ge2e_graph` writes
  it, needing neither torch nor onnx (`SpeakerEncoder` builds the same model in memory).
- `compare(model, windows)` runs the torch encoder (the reference; needs torch) and the ONNX model
  on the same mel windows and returns the largest absolute difference and the smallest cosine
  between their embeddings.
- `OnnxEncoder` and `bundled_model` (running such a model without torch) live in
  `engine.speakers.onnx_encoder`, which the encoder imports; this module is the build-time tool.

    python -m engine.speakers.ge2e_onnx OUT.onnx [--check AUDIO]
exports, then (with --check) compares both runtimes on the speech of AUDIO and exits 1 when the
smallest cosine is below 0.9999.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from engine.speakers.onnx_encoder import MODEL_NAME, OnnxEncoder, bundled_model

__all__ = ["MODEL_NAME", "OnnxEncoder", "bundled_model", "compare", "export", "speech_windows"]

MIN_COSINE = 0.9999


def export(out: Path, weights: Path | None = None) -> Path:
    """Write the encoder (resemblyzer's weights unless `weights`) as ONNX to `out` (no torch)."""
    from engine.speakers.embedding import resemblyzer_weights
    from engine.speakers.ge2e_graph import encoder_model, read_weights

    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(encoder_model(read_weights(weights or resemblyzer_weights())))
    return out


def compare(model: Path, windows: np.ndarray) -> tuple[float, float]:
    """(largest absolute difference, smallest cosine) between torch's and the model's embeddings."""
    import torch

    from engine.speakers.embedding import _build_network, resemblyzer_weights

    with torch.inference_mode():
        reference = _build_network(resemblyzer_weights())(torch.from_numpy(windows)).numpy()  # (B, 256)
    exported = OnnxEncoder(model).embed(windows, batch_size=64)  # (B, 256)
    cosine = np.sum(reference * exported, axis=1) / (
        np.linalg.norm(reference, axis=1) * np.linalg.norm(exported, axis=1)
    )
    return float(np.max(np.abs(reference - exported))), float(np.min(cosine))


def speech_windows(audio: Path, limit: int = 512) -> np.ndarray:
    """Up to `limit` mel windows (hop 0.4 s) over the VAD speech of a recording: (N, 160, 40)."""
    from engine.audio.io import load_audio
    from engine.audio.vad import SileroVad
    from engine.speakers.embedding import fixed_window, mel_frames, normalize_volume, window_starts

    recording = load_audio(audio, 16000)
    windows = []
    for segment in SileroVad().detect(recording):
        mel = mel_frames(normalize_volume(recording.slice(segment.start, segment.end)))
        windows += [fixed_window(mel, s) for s in window_starts(len(mel), 40)]
    return np.stack(windows[:limit])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m engine.speakers.ge2e_onnx", description=__doc__.split("\n")[0]
    )
    p.add_argument("out", type=Path, help="where to write the ONNX model")
    p.add_argument("--check", type=Path, metavar="AUDIO", help="compare both runtimes on this recording")
    args = p.parse_args(argv)
    export(args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)")
    if args.check is None:
        return 0
    windows = speech_windows(args.check)
    diff, cosine = compare(args.out, windows)
    print(f"{len(windows)} windows: max |torch - onnx| = {diff:.2e}, smallest cosine = {cosine:.7f}")
    return 0 if cosine >= MIN_COSINE else 1


if __name__ == "__main__":
    sys.exit(main())
