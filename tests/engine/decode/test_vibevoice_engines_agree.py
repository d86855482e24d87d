"""`murmur transcribe --backend vibevoice --engine murmur` writes the same transcript as `--engine hf`.

The tiny VibeVoice-ASR model trained on its own clips (built once per machine under .cache/murmur/)
runs through the whole command line with each decoder.
"""

from __future__ import annotations

import json
import os

import pytest

from engine.cli import main
from engine.testing.tiny import read_clips, tiny_trained_model

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def trained():
    return tiny_trained_model()


def transcribe(trained, engine: str, out) -> dict[str, list]:
    files = [str(audio) for audio, _ in read_clips(trained)]
    args = ["transcribe", *files, "--backend", "vibevoice", "--model", str(trained), "--device", "cpu"]
    code = main([*args, "--engine", engine, "--format", "json", "--out", str(out), "-q"])
    assert code == 0
    return {p.name: json.loads(p.read_text())["utterances"] for p in sorted(out.glob("*.json"))}


def test_the_tiny_model_transcribes_its_clips_identically_with_either_engine(trained, tmp_path):
    reference = transcribe(trained, "hf", tmp_path / "hf")
    ours = transcribe(trained, "murmur", tmp_path / "murmur")
    assert len(reference) == len(read_clips(trained)) >= 2
    assert all(utterances and all(u["text"] for u in utterances) for utterances in reference.values())
    assert ours == reference


def test_eviction_options_reach_the_engine_through_the_backend(trained):
    from engine.audio.io import load_audio
    from engine.backends import build_backend
    from engine.recipe import recipe_from
    from engine.types import Chunk

    audio, _ = read_clips(trained)[0]
    recording = load_audio(audio, 24000)
    chunk = Chunk(0, 0.0, recording.duration)
    options = {"model": str(trained), "device": "cpu", "engine": "murmur"}
    def backend(**more):  # through the option table, as the command line goes
        return build_backend("vibevoice", recipe_from({**options, **more}, "vibevoice").backend_config)

    wide = backend(eviction="both", output_window=4096, speech_window=4096)
    narrow = backend(eviction="speech", window=8, delay=0, speech_sink=2)
    (kept_all,) = wide.transcribe(recording, [chunk])
    (evicted,) = narrow.transcribe(recording, [chunk])
    assert kept_all.stats.kv_kept_fraction == 1.0  # a 4096-token window keeps a short clip whole
    assert evicted.stats.kv_kept_fraction is not None and evicted.stats.kv_kept_fraction < 0.9
