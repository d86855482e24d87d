"""The attention sparsity profiler on a tiny random VibeVoice-ASR model built from configs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.evaluation.plots import plot_sparsity
from engine.evaluation.sparsity import (
    CATEGORIES,
    combine,
    kept_mask,
    needed_fraction,
    profile_attention,
    sparsity_table,
    step_stats,
)

AUDIO_TOKEN = 597
SECONDS = 4


def tiny_model():
    from transformers import (
        Qwen2Config,
        VibeVoiceAcousticTokenizerEncoderConfig,
        VibeVoiceAsrConfig,
        VibeVoiceAsrForConditionalGeneration,
    )

    encoder = {"num_filters": 8, "depths": [1] * 7, "downsampling_ratios": [2, 2, 4, 5, 5, 8]}
    text = Qwen2Config(
        vocab_size=600,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
    )
    config = VibeVoiceAsrConfig(
        acoustic_tokenizer_encoder_config=VibeVoiceAcousticTokenizerEncoderConfig(hidden_size=16, **encoder),
        semantic_tokenizer_encoder_config=VibeVoiceAcousticTokenizerEncoderConfig(hidden_size=32, **encoder),
        text_config=text,
        audio_token_id=AUDIO_TOKEN,
        audio_bos_token_id=595,
        audio_eos_token_id=596,
    )
    torch.manual_seed(0)
    return VibeVoiceAsrForConditionalGeneration(config).eval()


def chunk_inputs() -> dict[str, torch.Tensor]:
    samples = SECONDS * 24000
    speech = -(-samples // 3200)  # 7.5 tokens per second
    ids = [10, 11, 12, 595, *([AUDIO_TOKEN] * speech), 596, 13, 14]
    generator = torch.Generator().manual_seed(1)
    return {
        "input_ids": torch.tensor([ids]),
        "input_values": 0.1 * torch.randn(1, 1, samples, generator=generator),
        "padding_mask": torch.ones(1, samples, dtype=torch.bool),
    }


@pytest.fixture(scope="module")
def model():
    return tiny_model()


@pytest.fixture(scope="module")
def profile(model):
    return profile_attention(model, chunk_inputs(), steps=12)


def test_needed_fraction_counts_the_largest_weights_up_to_the_mass():
    weights = np.array([0.01, 0.5, 0.19, 0.3])
    assert needed_fraction(weights, 0.99) == 0.75
    assert needed_fraction(weights, 0.5) == 0.25
    assert needed_fraction(weights, 1.0) == 1.0
    assert kept_mask(weights, 0.99).tolist() == [False, True, True, True]


def test_step_stats_split_every_entry_into_exactly_one_category():
    weights = np.array([0.6, 0.3, 0.05, 0.04, 0.01])
    speech = np.array([True, True, True, False, False])
    needed, split = step_stats(weights, speech, 0.9)
    assert split.tolist() == [0.4, 0.2, 0.0, 0.4]  # kept: the two largest speech weights
    assert needed == pytest.approx(2 / 3)


def test_the_profile_covers_every_layer_and_step(profile):
    assert len(profile.layers) == 3 and profile.steps == 12
    assert profile.speech_tokens == 30 and profile.prompt_tokens == 37
    assert profile.speech_needed_per_step.shape == (3, 12)
    for layer in profile.layers:
        parts = [layer.kept_speech, layer.evictable_speech, layer.kept_text, layer.evictable_text]
        assert sum(parts) == pytest.approx(1.0)
        assert 0 < layer.speech_needed <= 1
        # 30 of the KV entries are speech: the 37-token prompt holds them, then j + 1 outputs follow
        speech_share = np.mean([30 / (38 + j) for j in range(12)])
        assert layer.kept_speech + layer.evictable_speech == pytest.approx(speech_share)


def test_keeping_less_mass_never_needs_more_tokens():
    rng = np.random.default_rng(0)
    for _ in range(20):
        weights = rng.dirichlet(np.full(50, 0.3))
        fractions = [needed_fraction(weights, m) for m in (0.5, 0.9, 0.99, 1.0)]
        assert fractions == sorted(fractions) and fractions[0] < fractions[-1]


def test_profiles_of_several_chunks_combine_into_means(profile):
    both = combine([profile, profile])
    assert both.steps == 24 and both.layers == profile.layers
    other = dataclasses.replace(
        profile,
        prompt_tokens=profile.prompt_tokens + 10,
        layers=tuple(
            dataclasses.replace(layer, speech_needed=1.0, kept_speech=0.0) for layer in profile.layers
        ),
    )
    mixed = combine([profile, other])  # each chunk weighs the same: the means a reader sees
    for mean, mine in zip(mixed.layers, profile.layers, strict=True):
        assert mean.speech_needed == pytest.approx((mine.speech_needed + 1.0) / 2)
        assert mean.kept_speech == pytest.approx(mine.kept_speech / 2)
        assert mean.kept_text == pytest.approx(mine.kept_text)
    assert mixed.prompt_tokens == profile.prompt_tokens + 5


def test_table_and_bar_plot(profile, tmp_path):
    table = sparsity_table(profile)
    assert table.splitlines()[0].startswith("| layer | speech tokens for 99 % (%) |")
    assert all(c in table for c in CATEGORIES) and len(table.splitlines()) == 2 + 3 + 2
    path = plot_sparsity(profile, tmp_path / "sparsity.png")
    assert path.read_bytes().startswith(b"\x89PNG")


def test_the_profiler_refuses_batches_and_bad_mass(model):
    inputs = chunk_inputs()
    with pytest.raises(ValueError, match="mass"):
        profile_attention(model, inputs, steps=1, mass=1.5)
    batch = {k: torch.cat([v, v]) for k, v in inputs.items()}
    with pytest.raises(ValueError, match="batch size 1"):
        profile_attention(model, batch, steps=1)


def test_the_command_profiles_a_saved_checkpoint_prompted_like_the_backend(tmp_path, capsys):
    from engine.evaluation.sparsity import main
    from engine.testing.tiny import save_tiny_checkpoint

    checkpoint = save_tiny_checkpoint(tmp_path / "tiny")
    demo = Path(__file__).resolve().parents[3] / "resources" / "demo" / "meeting.flac"
    args = [str(checkpoint), str(demo), "--seconds", "4", "--steps", "3", "--device", "cpu"]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["sparsity.json", "sparsity.md", "sparsity.png"]
    data = json.loads((tmp_path / "out" / "sparsity.json").read_text())
    assert data["speech_tokens"] == 30 and data["steps"] == 3  # 4 s at 7.5 tokens per second
    assert "| layer |" in capsys.readouterr().out
