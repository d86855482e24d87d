"""Samples that are not numbers (NaN, ±inf) are repaired at decode, counted and reported, so no later
stage (VAD, diarizer, model) ever sees one."""

from __future__ import annotations

import logging

import numpy as np
import soundfile as sf

from engine.audio.io import load_audio


def poisoned(path, rate=16000, channels=1):
    t = np.arange(rate * 3) / rate
    x = np.repeat((0.3 * np.sin(2 * np.pi * 200 * t))[:, None], channels, axis=1).astype(np.float32)
    x[1000:1500, 0] = np.nan
    x[20000:20010, -1] = np.inf
    x[30000, 0] = -np.inf
    sf.write(path, x, rate, subtype="FLOAT")
    return path


def test_nan_and_inf_samples_become_silence_and_are_reported(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="engine.audio.io"):
        recording = load_audio(poisoned(tmp_path / "bad.wav"), 16000)
    assert np.isfinite(recording.samples).all()
    assert np.all(recording.samples[1000:1500] == 0)
    assert abs(recording.duration - 3.0) < 1e-3
    warning = " ".join(r.getMessage() for r in caplog.records)
    assert "bad.wav" in warning and "511 samples" in warning


def test_repair_happens_before_resampling_so_no_nan_spreads(tmp_path):
    recording = load_audio(poisoned(tmp_path / "bad.wav", rate=96000, channels=8), 16000)
    assert np.isfinite(recording.samples).all()
    assert np.abs(recording.samples).max() <= 1.0
    assert float(np.abs(recording.samples[8000:]).mean()) > 0.05  # the tone survives around the damage
