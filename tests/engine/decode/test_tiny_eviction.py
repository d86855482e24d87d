"""Every policy evicts on the tiny VibeVoice-ASR checkpoint once its windows are smaller than a clip:
the engine reports what it kept, how much speech went before it was written, and a transcript.

The clips are about 6 s (≈ 45 speech tokens, ≈ 80 output tokens), far shorter than the paper's
windows, so the windows here are scaled down until each policy drops entries.
"""

from __future__ import annotations

import os

import pytest

from engine.testing.tiny import read_clips, tiny_trained_model

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SETTINGS = {
    "none": {},
    "output": {"sink": 2, "window": 16},
    "speech": {"speech_sink": 2, "window": 8, "delay": 4, "speech_rate": 2},
    "both": {
        "sink": 2,
        "output_window": 40,
        "speech_sink": 2,
        "speech_window": 8,
        "delay": 4,
        "speech_rate": 2,
    },
    "speech-follow": {"speech_sink": 2, "window": 16, "delay": 4, "speech_rate": 1},
    "speech-anchor": {"speech_sink": 2, "look_back": 2, "look_ahead": 2},
}


@pytest.fixture(scope="module")
def clip():
    from engine.audio.io import load_audio
    from engine.types import Chunk

    trained = tiny_trained_model()
    audio, _ = read_clips(trained)[0]
    recording = load_audio(audio, 24000)
    return trained, recording, Chunk(0, 0.0, recording.duration)


def tuned_backend(options: dict):
    """A VibeVoice backend from command-line style options, read through the option table."""
    from engine.backends import build_backend
    from engine.recipe import recipe_from

    return build_backend("vibevoice", recipe_from(options, "vibevoice").backend_config)


@pytest.fixture(scope="module")
def results(clip):
    trained, recording, chunk = clip
    options = {"model": str(trained), "device": "cpu", "engine": "murmur"}
    out = {}
    for name, settings in SETTINGS.items():
        backend = tuned_backend({**options, "eviction": name, **settings})
        (out[name],) = backend.transcribe(recording, [chunk])
    return out


def test_each_policy_with_small_windows_evicts_and_still_transcribes(results):
    assert results["none"].stats.kv_kept_last is None  # no eviction: nothing to report
    for name in ("output", "speech", "both", "speech-follow"):
        stats = results[name].stats
        assert stats.kv_kept_last is not None and stats.kv_kept_last < 0.95, name
        assert results[name].raw_text, name


def test_output_eviction_drops_no_speech_and_speech_eviction_reports_what_it_dropped_unwritten(results):
    assert results["output"].stats.speech_lost_seconds == 0.0  # it never touches speech
    for name in ("speech", "both", "speech-follow"):
        lost = results[name].stats.speech_lost_seconds
        assert lost is not None and lost > 0.5, name  # the windows are far behind the transcript


def test_speech_anchor_loses_nothing_and_keeps_everything_before_three_segments(results):
    stats = results["speech-anchor"].stats
    assert stats.speech_lost_seconds == 0.0
    assert results["speech-anchor"].raw_text == results["none"].raw_text


def test_the_batch_minimum_cap_lets_a_long_chunk_keep_what_its_short_batch_mate_keeps(clip):
    """One recording cut into a long and a short chunk, decoded together: with `speech_cap=batch-min`
    (the authors' batching) the long chunk drops no more speech than the short one can."""
    from engine.types import Chunk

    trained, recording, _ = clip
    cut = 0.75 * recording.duration
    chunks = [Chunk(0, 0.0, cut), Chunk(1, cut, recording.duration)]
    options = {"model": str(trained), "device": "cpu", "engine": "murmur", **SETTINGS["speech"]}
    kept = {}
    for cap in ("row", "batch-min"):
        backend = tuned_backend({**options, "eviction": "speech", "speech_cap": cap})
        kept[cap] = {r.chunk.index: r.stats.kv_kept_last for r in backend.transcribe(recording, chunks)}
    assert kept["batch-min"][0] > kept["row"][0]  # the long chunk keeps more
    assert kept["batch-min"][1] == kept["row"][1]  # the shortest chunk's cap is its own
