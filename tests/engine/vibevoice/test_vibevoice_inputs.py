"""From audio to a decode request: the checkpoint's own prompt, normalised audio, the model's features."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine.backends.vibevoice.inputs import AcousticNoise, build_request, encode_audio, tokenize_chunk
from engine.backends.vibevoice.prompt import build_prompt

RATE = 24000


@pytest.fixture(scope="module")
def speechy() -> np.ndarray:
    """3.25 s of a tone wandering in pitch and loudness (24 kHz)."""
    t = np.arange(int(3.25 * RATE)) / RATE
    return (0.1 * np.sin(2 * np.pi * (200 + 80 * np.sin(t)) * t) * (1 + np.sin(3 * t))).astype(np.float32)


def test_the_prompt_is_the_checkpoints_own_chat_template(loaded):
    processor, tokens = loaded.processor, loaded.tokens
    for context in (None, "Alice, Kubernetes"):
        (templated,) = processor.apply_transcription_request(
            np.zeros(RATE, np.float32), prompt=context, tokenize=False
        )
        assert build_prompt(12.5, tokens, context) == templated.replace("<|AUDIO_DURATION|>", "12.50")


def test_the_prompt_states_the_duration_and_the_context(loaded, speechy):
    ids, values = tokenize_chunk(loaded.processor, loaded.tokens, speechy, "Alice, Kubernetes")
    text = loaded.processor.tokenizer.decode(ids)
    assert "This is a 3.25 seconds audio, with extra info: Alice, Kubernetes\n\nPlease transcribe it" in text
    assert text.startswith("<|im_start|>system\n") and text.endswith("<|im_end|>\n")
    assert int((ids == loaded.tokens.audio_id).sum()) == math.ceil(len(speechy) / 3200)  # 7.5 per second
    assert values.shape == (1, 1, math.ceil(len(speechy) / 3200) * 3200)


def test_the_request_matches_the_models_own_forward(loaded, speechy):
    request = build_request(loaded, speechy, request_id=3, max_new_tokens=40)
    ids, values = tokenize_chunk(loaded.processor, loaded.tokens, speechy)
    assert request.prompt_length == len(ids) and request.id == 3 and request.max_new_tokens == 40
    start, end = request.speech_span
    assert (ids[start:end] == loaded.tokens.audio_id).all() and end - start == math.ceil(len(speechy) / 3200)
    model = loaded.model
    with torch.no_grad():
        theirs = model(input_ids=ids[None], input_values=values, sample=False).logits[0]  # (P, V)
        hidden = model.model.language_model(inputs_embeds=request.inputs_embeds[None]).last_hidden_state
        ours = model.lm_head(hidden)[0]
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-4)


def test_loudness_does_not_change_the_request(loaded, speechy):
    quiet = build_request(loaded, speechy, request_id=0, max_new_tokens=8).inputs_embeds
    loud = build_request(loaded, speechy * 8, request_id=0, max_new_tokens=8).inputs_embeds
    torch.testing.assert_close(quiet, loud, rtol=1e-4, atol=1e-4)


def test_long_audio_encoded_in_segments_equals_encoding_it_whole(loaded, speechy):
    _, values = tokenize_chunk(loaded.processor, loaded.tokens, speechy)
    whole = encode_audio(loaded.model, values, values.shape[-1], AcousticNoise())
    for seconds in (1, 2):
        pieces = encode_audio(loaded.model, values, seconds * RATE // 3200 * 3200, AcousticNoise())
        torch.testing.assert_close(pieces, whole, rtol=1e-3, atol=1e-4)  # float32 conv rounding


def test_the_default_features_are_deterministic_and_seeded_noise_repeats(loaded, speechy):
    def features(noise: AcousticNoise) -> torch.Tensor:
        return build_request(loaded, speechy, request_id=0, max_new_tokens=8, noise=noise).inputs_embeds

    assert torch.equal(features(AcousticNoise()), features(AcousticNoise()))
    assert torch.equal(features(AcousticNoise("seeded", 5)), features(AcousticNoise("seeded", 5)))
    assert not torch.allclose(features(AcousticNoise("seeded", 5)), features(AcousticNoise("seeded", 6)))
    assert not torch.allclose(features(AcousticNoise("sampled")), features(AcousticNoise()))


def test_an_empty_chunk_is_refused(loaded):
    with pytest.raises(ValueError, match="mono samples"):
        build_request(loaded, np.zeros(0, np.float32), request_id=0, max_new_tokens=8)
