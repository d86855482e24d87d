"""Spectral clustering finds the number of speakers; the GE2E encoder tells voices apart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.errors import ModelLoadError
from engine.speakers.clustering import cluster
from engine.speakers.diarization import SpeakerCount
from engine.speakers.embedding import SpeakerEncoder, mel_frames


def voices(k: int, per: int, spread: float = 0.15, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, 32))
    labels = np.repeat(np.arange(k), per)
    x = centres[labels] / np.linalg.norm(centres[labels], axis=1, keepdims=True) + rng.normal(
        0, spread, (k * per, 32)
    )
    return x / np.linalg.norm(x, axis=1, keepdims=True), labels


def agree(a: np.ndarray, b: np.ndarray) -> bool:
    return len({(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)}) == len(set(b.tolist()))


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_the_number_of_speakers_is_found_by_the_eigengap(k):
    x, truth = voices(k, 60)
    labels = cluster(x)
    assert int(labels.max()) + 1 == k and agree(labels, truth)


def test_given_counts_and_bounds_are_obeyed():
    x, _ = voices(4, 40)
    assert int(cluster(x, SpeakerCount(exact=2)).max()) + 1 == 2
    assert int(cluster(x, SpeakerCount(maximum=3)).max()) + 1 == 3
    assert int(cluster(x, SpeakerCount(minimum=6)).max()) + 1 == 6


def test_many_embeddings_are_clustered_through_a_subset_and_all_labelled():
    x, truth = voices(3, 400)
    labels = cluster(x, max_points=300)
    assert len(labels) == len(x) and agree(labels, truth)


def test_labels_are_numbered_in_order_of_first_appearance():
    x, _ = voices(3, 30)
    order = np.random.default_rng(1).permutation(len(x))
    labels = cluster(x[order])
    assert list(dict.fromkeys(labels.tolist())) == [0, 1, 2]


def test_the_mel_front_end_matches_the_encoders_training_features():
    # a 1 kHz tone puts its energy in the Slaney mel band around 1 kHz (band 13 of 40 at 16 kHz)
    t = np.arange(16000) / 16000
    mel = mel_frames(np.sin(2 * np.pi * 1000 * t).astype(np.float32))
    assert mel.shape == (101, 40)
    assert int(np.argmax(mel[50])) == 13 and mel[50, 13] > 1e6 * mel[50, 20]


def test_the_encoder_tells_the_demo_voices_apart(encoder, demo, demo_turns):
    by_speaker: dict[str, list[np.ndarray]] = {}
    for t in demo_turns:
        by_speaker.setdefault(t.speaker, []).append(encoder.embed_audio(demo.slice(t.start, t.end)))
    names = sorted(by_speaker)
    mean = {n: np.mean(by_speaker[n], axis=0) for n in names}
    # nearly every turn is closest to its own speaker's mean (bob and dave sound alike to it)
    right = sum(max(names, key=lambda m: float(e @ mean[m])) == n for n in names for e in by_speaker[n])
    assert right >= 0.9 * len(demo_turns)


def test_loudness_does_not_change_an_embedding(encoder, demo):
    piece = demo.slice(10.0, 13.0)
    # quiet input is raised to the encoder's training level (-30 dBFS), as resemblyzer does
    quiet, quieter = encoder.embed_audio(piece * 0.1), encoder.embed_audio(piece * 0.02)
    assert float(quiet @ quieter) > 0.999 and abs(float(np.linalg.norm(quiet)) - 1) < 1e-5


def test_missing_encoder_weights_are_a_load_error():
    with pytest.raises(ModelLoadError, match="speaker encoder"):
        SpeakerEncoder(weights=Path("/no/such/pretrained.pt")).embed_audio(np.zeros(16000, np.float32))


@pytest.mark.slow
def test_embeddings_equal_resemblyzers_own(encoder, demo):
    from resemblyzer import VoiceEncoder  # imports librosa: ~20 s of numba JIT the first time
    from resemblyzer.audio import normalize_volume

    reference = VoiceEncoder("cpu", verbose=False)
    for a, b in [(1.0, 4.0), (20.0, 30.3), (5.0, 5.5)]:
        piece = demo.slice(a, b)
        theirs = reference.embed_utterance(normalize_volume(piece, -30, increase_only=True))
        assert np.abs(theirs - encoder.embed_audio(piece)).max() < 1e-5
